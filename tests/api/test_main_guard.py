"""A script that starts a campaign outside ``if __name__ == "__main__":`` is told so: the
embedded cluster's worker processes import the script again, and each would start the
campaign once more."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

from tests.conftest import MM1_TWO_LOADS

REPO = Path(__file__).resolve().parents[2]
GUARD = 'if __name__ == "__main__":'


def run_script(folder: Path, body: str) -> subprocess.CompletedProcess:
    (folder / "spec.yaml").write_text(MM1_TWO_LOADS)
    script = folder / "study.py"
    script.write_text(body)
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=240,
        env=environment,
    )


def test_an_unguarded_script_is_told_to_call_campaign_under_the_guard(tmp_path):
    done = run_script(
        tmp_path, "import campaign\ncampaign.run('spec.yaml', workers=1, progress=False)\n"
    )
    script = tmp_path / "study.py"
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[-1] == (
        "campaign.errors.CampaignError: the embedded Dask cluster did not start: Nanny failed to "
        f"start. (if {script} calls campaign outside `{GUARD}`, call it under that guard)"
    )
    worker = (
        f"campaign.errors.CampaignError: {script} starts a campaign when it is imported, and the "
        f"embedded cluster's worker processes import it: call campaign under `{GUARD}`"
    )
    assert worker in lines  # the worker process's own line, not "in use by another run"
    assert "in use by another campaign run" not in done.stderr
    assert not (tmp_path / "out" / "results.nc").exists()


def test_the_same_script_under_the_guard_runs(tmp_path):
    body = (
        "import campaign\n"
        f"{GUARD}\n"
        "    results = campaign.run('spec.yaml', workers=1, progress=False)\n"
        "    print(int(results['mean_wait'].count()))\n"
    )
    done = run_script(tmp_path, body)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["8"]  # 2 loads x 4 replicates


def test_a_cluster_that_did_not_start_names_the_guard_only_for_a_script_without_one(
    tmp_path, monkeypatch
):
    """The `campaign` command's own script (a console script, guarded) gets no such hint."""
    from campaign.cluster.main_guard import guard_hint

    for body, hint in [
        ("import campaign\ncampaign.run('spec.yaml')\n", True),
        ("from campaign.cli import main\nif __name__ == '__main__':\n    main()\n", False),
    ]:
        script = tmp_path / "study.py"
        script.write_text(body)
        main = types.ModuleType("__main__")
        main.__file__, main.__spec__ = str(script), None
        monkeypatch.setitem(sys.modules, "__main__", main)
        expected = f" (if {script} calls campaign outside `{GUARD}`, call it under that guard)"
        assert guard_hint() == (expected if hint else "")
