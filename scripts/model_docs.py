"""Write the generated tables (params, metrics) into each built-in model's README.md.

    python scripts/model_docs.py          # rewrite them
    python scripts/model_docs.py --check  # exit 1 naming the READMEs that are out of date

The tables come from each model's declaration (`campaign models show NAME --markdown`); a
README takes part when it holds the generated block's markers.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from campaign.models import BUILTIN
from campaign.models.describe import BEGIN, refresh


def readmes() -> dict[str, Path]:
    """Model name -> the README.md of its package, for those that hold the markers."""
    found = {}
    for name, reference in BUILTIN.items():
        spec = importlib.util.find_spec(reference.partition(":")[0])
        if spec is None or spec.origin is None or not spec.origin.endswith("__init__.py"):
            continue
        readme = Path(spec.origin).parent / "README.md"
        if readme.exists() and BEGIN.format(name=name) in readme.read_text():
            found[name] = readme
    return found


def main(argv: list[str]) -> int:
    stale = []
    for name, readme in readmes().items():
        text = readme.read_text()
        fresh = refresh(text, name)
        if fresh != text:
            stale.append(readme)
            if "--check" not in argv:
                readme.write_text(fresh)
    if "--check" in argv and stale:
        print("out of date (python scripts/model_docs.py): " + ", ".join(map(str, stale)))
        return 1
    for readme in [] if "--check" in argv else stale:
        print(f"wrote {readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
