"""The plan: a spec checked against its model, and where each task stands by the ledger.

Loading a spec never imports the model (nor the design): the plan does, once. With a
precision target, a run enters each stored batch into the plan's task table; the rounds it
decides from it must be those `make_plan` replays from the ledger, or a rerun would not
continue where the run stopped.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
from scipy import stats

import campaign
from campaign.cli.main import main
from campaign.plan.plan import identity, make_plan, precision_progress
from campaign.store.ledger import Ledger
from tests.conftest import MM1_PRECISION
from tests.test_layers import runtime_nodes

ENGINE = Path(__file__).resolve().parents[2] / "campaign"

PRECISE = """
name: tally
model: busy
params: {duration_ms: 0}
factors:
  tag: [steady, noisy, broken]
precision: {metrics: [value], half_width: 0.1, relative: false, min_replicates: 3,
            max_replicates: 12}
seed: 5
output: out
"""


def engine_imports() -> dict[str, set[str]]:
    """Per engine module (campaign/**/*.py outside models/, by dotted name), the engine modules
    it imports, wherever it does."""
    modules = {}
    for path in ENGINE.rglob("*.py"):
        parts = path.relative_to(ENGINE).with_suffix("").parts
        if parts[0] != "models" and parts[-1] != "__main__" and parts != ("__init__",):
            modules[".".join(("campaign", *parts)).removesuffix(".__init__")] = path
    graph = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text())
        nodes = list(runtime_nodes(tree))
        names = {node.module for node in nodes if isinstance(node, ast.ImportFrom)}
        names |= {
            alias.name for node in nodes if isinstance(node, ast.Import) for alias in node.names
        }
        graph[module] = {name for name in names if name in modules and name != module}
    return graph


def test_engine_modules_import_each_other_in_one_direction():
    graph = engine_imports()
    assert "campaign.design.tasks" not in graph["campaign.spec.load"]
    assert "campaign.plan.plan" in graph["campaign.pipelines.run"]
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, "import cycle: " + " -> ".join((*path, module))
        if module not in done:
            for imported in sorted(graph[module]):
                visit(imported, (*path, module))
            done.add(module)

    for module in sorted(graph):
        visit(module, ())


def test_loading_a_spec_imports_neither_the_model_nor_the_design(tmp_path):
    """Nor do `validate` and `plan` import what only a run needs (Dask's distributed,
    netCDF4): it took `campaign plan` a second and tens of megabytes each time."""
    path = tmp_path / "spec.yaml"
    path.write_text(
        "name: s\nmodel: mm1\nfactors: {arrival_rate: [0.5, 9]}\nreplicates: 2\nseed: 1\n"
    )
    (tmp_path / "valid.yaml").write_text(path.read_text().replace(", 9]", "]"))
    code = textwrap.dedent(
        f"""
        import json, sys
        from campaign.spec.load import load_spec
        spec = load_spec({str(path)!r})  # arrival_rate 9 is the model's to refuse, not here
        loaded = sorted(m for m in sys.modules if m.startswith("campaign"))
        import campaign
        valid = {str(path).replace("spec.yaml", "valid.yaml")!r}
        campaign.validate(valid)
        planned = campaign.plan(valid).tasks
        print(json.dumps([spec.tasks, loaded, planned, sorted(sys.modules)]))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    tasks, modules, planned, after_plan = json.loads(result.stdout)
    assert tasks == 4
    assert "campaign.spec.load" in modules
    assert not {"campaign.design.tasks", "campaign.plan.plan", "campaign.models.check"} & set(
        modules
    )
    assert planned == 2
    assert not {"distributed", "netCDF4"} & set(after_plan)


def record(key: str, value: float | None) -> dict:
    """A ledger record as a run stores it: ok with a value, or failed (``value`` None)."""
    if value is None:
        return {"key": key, "status": "failed", "error": "RuntimeError: x", "attempts": 1}
    return {"key": key, "status": "ok", "metrics": {"value": value}, "attempts": 1}


def test_a_run_decides_the_rounds_make_plan_replays_from_the_ledger(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(PRECISE)
    plan = make_plan(spec)
    ledger = Ledger(plan.spec.output)
    ledger.write_identity(identity(plan.spec))  # as a run does before it stores anything
    replicates = plan.spec.replicates
    assert plan.rounds.target.tolist() == [3, 3, 3] and len(plan.missing) == 9
    rounds = 0
    while plan.to_run:
        rounds += 1
        batch, indices = [], {}
        for index in plan.to_run:
            cell, replicate = divmod(index, replicates)
            key = plan.design.task(index).key
            indices[key] = index
            if cell == 0:  # the same value: its interval is 0 wide at once
                batch.append(record(key, 1.0))
            elif cell == 1:  # alternating: never narrow enough, 3 -> 6 -> 12 replicates
                batch += [record(key, None), record(key, 10.0 * (replicate % 2))]
            elif rounds == 1 and replicate == 1:  # fails in the first run: holds the cell
                batch.append(record(key, None))
            else:
                batch += [record(key, 0.5), record(key, None)]  # a success beats a failure
        ledger.append(batch)
        plan.stored(batch, indices)
        plan.next_round()
        replayed = make_plan(spec)
        for name in ("target", "met", "at_max", "waiting"):
            assert np.array_equal(getattr(plan.rounds, name), getattr(replayed.rounds, name))
        assert (plan.done, plan.failed, plan.missing) == (
            replayed.done,
            replayed.failed,
            replayed.missing,
        )
        if rounds == 1:
            assert plan.rounds.waiting.tolist() == [False, False, True]
            assert plan.failed == [2 * replicates + 1]
            # steady meets 0.1 with 3 equal values; noisy (0, 10, 0) is widest; broken has
            # two values: an interval, but fewer than min_replicates
            half = stats.t.ppf(0.975, 2) * np.std([0, 10, 0], ddof=1) / np.sqrt(3)
            assert precision_progress(plan) == [
                f"  value: 1 of 3 cells within 0.1 at 95% confidence; widest {half:.3g} "
                "(tag=noisy, 3 replicates)"
            ]
    assert rounds == 3
    assert plan.rounds.target.tolist() == [3, 12, 3]
    assert plan.rounds.met.tolist() == [True, False, True]
    assert plan.rounds.at_max.tolist() == [False, True, False]
    assert plan.done == 18 and not plan.failed and not plan.missing
    assert precision_progress(plan) == [
        "  value: 2 of 3 cells within 0.1 at 95% confidence; widest "
        f"{stats.t.ppf(0.975, 11) * np.std([0, 10] * 6, ddof=1) / np.sqrt(12):.3g} "
        "(tag=noisy, 12 replicates)"
    ]


def test_validate_and_plan_say_the_precision_target_and_where_each_metric_stands(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(PRECISE.replace("relative: false", "relative: true, confidence: 0.9"))
    assert main(["validate", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "  design: 3 cells x 3 to 12 replicates = 9 to 36 tasks; seed 5\n" in out
    target = "  precision: interval half-width at most 10% of |mean| at 90% confidence, for value\n"
    assert target in out
    assert main(["plan", str(spec)]) == 0
    assert capsys.readouterr().out.endswith(
        "plan: 0 done, 0 failed (will be retried), 9 missing; 9 tasks would run\n"
        "precision: 3 cells still running (later rounds follow their results)\n"
        "  value: no interval yet (3 cells with fewer than 2 results)\n"
    )


def test_status_says_at_which_level_the_widest_precision_interval_is(
    tmp_path, capsys, scheduler_address
):
    """`status` prints no target line above the progress: its widest interval (at the
    target's 90 %) stood beside a results.nc of 95 % intervals, wider, with no level said."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(MM1_PRECISION.replace("max_replicates: 12}", "max_replicates: 12, "
                                          "confidence: 0.9}"))  # fmt: skip
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert main(["status", str(spec)]) == 0
    lines = capsys.readouterr().out.splitlines()
    progress = [line for line in lines if line.startswith("  mean_wait: ")]
    assert len(progress) == 1
    assert " within 25% of |mean| at 90% confidence; widest " in progress[0]
