"""A script that starts a campaign outside ``if __name__ == "__main__":``.

The embedded cluster's worker processes start (multiprocessing's spawn) by importing the
script's main module again. Unguarded, each of them would start the campaign once more while
importing it: it met the output folder held by the script itself ("in use by another campaign
run"), and the script's run stopped on "Nanny failed to start", neither naming the cause.
"""

from __future__ import annotations

import multiprocessing
import sys

from campaign.errors import CampaignError

GUARD = 'if __name__ == "__main__":'


def main_script() -> str | None:
    """The file of the main module when Python runs a script (None: a notebook, an
    interactive session, ``python -c`` or ``-m``)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return path if path and getattr(main, "__spec__", None) is None else None


def refuse_while_importing_main() -> None:
    """Refuse to start a campaign in a worker process still importing the script that
    started it (multiprocessing marks such a process as inheriting, and refuses to start one
    of its own there for the same reason)."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        importing = sys.modules.get("__mp_main__")  # the script, as the worker imports it
        script = getattr(importing, "__file__", None) or "the main module"
        raise CampaignError(
            f"{script} starts a campaign when it is imported, and the embedded cluster's "
            f"worker processes import it: call campaign under `{GUARD}`"
        )


def guard_hint() -> str:
    """What to say beside an embedded cluster that did not start, in a script that has no
    such guard (the `campaign` command's own script has one)."""
    script = main_script()
    if script is None or _guarded(script):
        return ""
    return f" (if {script} calls campaign outside `{GUARD}`, call it under that guard)"


def _guarded(script: str) -> bool:
    try:
        with open(script, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1_000_000)
    except OSError:
        return False
    return "'__main__'" in text or '"__main__"' in text
