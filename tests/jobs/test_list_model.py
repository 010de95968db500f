"""List orders in the ``jobs`` model: the params, their one-line errors, the FCFS cells being
the arrival-order schedulers, and every order x mode on a real KTH-SP2 slice."""

from __future__ import annotations

import pytest

from campaign.models.jobs import MODEL, parse, run, schedule
from campaign.models.rigid.feasibility import check_feasible
from campaign.results.names import metric_values

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


def same(a: dict, b: dict) -> bool:
    """Bit-identical metrics (NaN equal to NaN)."""
    return a.keys() == b.keys() and all(repr(a[k]) == repr(b[k]) for k in a)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"order": "psrs", "scheduler": "easy"}, "'scheduler' excludes 'order' and 'backfill'"),
        ({"weight": "work"}, "'weight' applies to list scheduling"),
        ({"reorder_ratio": 0.5}, "'reorder_ratio' applies to list scheduling"),
        ({"order": "lifo"}, "'order' must be one of fcfs, psrs, smart_ffia, smart_nfiw"),
        ({"backfill": "all"}, "'backfill' must be one of none, easy, conservative, greedy"),
        ({"order": "psrs", "weight": "area"}, "'weight' must be one of unit, work"),
        (
            {"order": "psrs", "reorder_ratio": 1},
            r"'reorder_ratio' must be a number in \[0, 1\) or null",
        ),
        ({"order": "smart_ffia", "smart_gamma": 1}, "'smart_gamma' must be a number > 1"),
        ({"scheduler": "list_easy"}, "'scheduler' must be one of fcfs, easy, conservative"),
        ({"pfcfs_delay_s": 60}, "'pfcfs_delay_s' needs 'scheduler: pfcfs'"),
        ({"scheduler": "pfcfs", "pfcfs_preset": "pfcfs4"}, "'pfcfs_preset' must be one of"),
        ({"scheduler": "pfcfs", "pfcfs_wide": 0}, r"'pfcfs_wide' must be a number in \(0, 1\]"),
        ({"scheduler": "pfcfs", "pfcfs_max_preemptions": 1.5}, "'pfcfs_max_preemptions' must"),
        (
            {"scheduler": "pfcfs", "pfcfs_slice_s": 0},
            "'pfcfs_slice_s' must be a number > 0 or 'delay'",
        ),
        ({"scheduler": "pfcfs", "pfcfs_preempt": "some"}, "'pfcfs_preempt' must be one of"),
        ({"scheduler": "pfcfs", "hetero_fraction": 0.5}, "pfcfs runs on identical processors"),
        (
            {"scheduler": "pfcfs", "pfcfs_penalty_s": 600},
            r"pfcfs_penalty_s 600 must be shorter than the gang slice \(600 s",
        ),
        (
            {
                "scheduler": "pfcfs",
                "pfcfs_preset": "theory",
                "pfcfs_delay_s": 30,
                "pfcfs_penalty_s": 45,
            },
            r"pfcfs_penalty_s 45 must be shorter than the gang slice \(30 s",
        ),
    ],
)
def test_list_params_fail_on_one_line(params, message):
    with pytest.raises(ValueError, match=message):
        MODEL.check({"workload": "synthetic", **params})


@pytest.mark.parametrize(
    "params",
    [
        {"pfcfs_penalty_s": 599},  # below the slice of pfcfs1
        {"pfcfs_preset": "pfcfs3", "pfcfs_penalty_s": 900},  # one switch: no next one to meet
        {"pfcfs_slice_s": 60, "pfcfs_max_preemptions": 1, "pfcfs_penalty_s": 120},
    ],
)
def test_a_penalty_no_later_switch_cuts_short_is_allowed(params):
    MODEL.check({"workload": "synthetic", "scheduler": "pfcfs", **params})


@pytest.mark.parametrize(
    "params",
    [
        {"pfcfs_preset": "theory", "pfcfs_delay_s": 0},
        {"pfcfs_slice_s": "delay", "pfcfs_delay_s": 0},
        {"pfcfs_preset": "pfcfs2", "pfcfs_slice_s": "delay", "pfcfs_delay_s": 0},
    ],
)
def test_a_gang_slice_of_zero_is_refused(params):
    """pfcfs_slice_s must be > 0; 'delay' with a delay of 0 is a slice of 0 s (a wide job
    ran [0, 0) and switched back at whatever event came next)."""
    with pytest.raises(ValueError, match=r"gang slice of 0 s .*pfcfs_slice_s"):
        MODEL.check({"workload": "synthetic", "scheduler": "pfcfs", **params})


@pytest.mark.parametrize("switches", [0, 1])
def test_a_delay_of_zero_without_a_second_switch_is_allowed(switches):
    MODEL.check(
        {
            "workload": "synthetic",
            "scheduler": "pfcfs",
            "pfcfs_slice_s": "delay",
            "pfcfs_delay_s": 0,
            "pfcfs_max_preemptions": switches,
        }
    )


def test_a_null_reorder_ratio_reorders_at_every_arrival():
    """null is a value of its own for reorder_ratio; for the others it means the default."""
    base = {"workload": "synthetic", "order": "psrs"}
    assert parse(base).policy()[1].reorder_ratio == 2 / 3
    assert parse({**base, "reorder_ratio": None}).policy()[1].reorder_ratio is None
    assert parse({**base, "smart_gamma": None}).smart_gamma == 2.0
    assert parse({**base, "backfill": "greedy"}).policy()[0] == "list_greedy"
    assert parse({"workload": "synthetic", "order": "fcfs"}).policy()[0] == "easy"


@pytest.mark.parametrize(("backfill", "scheduler"), [("none", "fcfs"), ("easy", "easy")])
def test_fcfs_cells_are_the_arrival_order_schedulers(workloads, monkeypatch, backfill, scheduler):
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    base = {"trace": KTH, "jobs": 1500}
    listed = run({**base, "order": "fcfs", "backfill": backfill}, 3)
    assert same(listed, run({**base, "scheduler": scheduler}, 3))
    assert listed["orders_computed"] == 0


def test_greedy_and_list_orders_on_a_kth_slice(workloads, monkeypatch):
    """Every order x mode gives a feasible schedule of the 1,500 jobs; the computed orders
    are counted; the flow metrics agree with the response times."""
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    base = {"trace": KTH, "jobs": 1500, "estimate": "user"}
    for order in ("fcfs", "psrs", "smart_ffia", "smart_nfiw"):
        for backfill in ("none", "easy", "conservative", "greedy"):
            for weight in ("unit", "work"):
                params = {**base, "order": order, "backfill": backfill, "weight": weight}
                result = schedule(params, 1)
                check_feasible(result)
                values = run(params, 1)
                assert values["total_flow"] == pytest.approx(1500 * values["mean_turnaround"])
                assert (values["orders_computed"] > 0) == (order != "fcfs")
                if backfill == "none":
                    assert values["jobs_backfilled"] == 0


def test_pfcfs_params_and_presets(workloads, monkeypatch):
    """Presets set the parameters, explicit ones override them; n = 0 is FCFS; the KTH
    slice's preempted schedules are feasible and count their preemptions."""
    monkeypatch.setenv("CAMPAIGN_WORKLOADS", str(workloads))
    base = {"trace": KTH, "jobs": 1500, "scheduler": "pfcfs"}
    fcfs = run({"trace": KTH, "jobs": 1500, "scheduler": "fcfs"}, 2)
    never = run({**base, "pfcfs_max_preemptions": 0}, 2)
    assert never["n_preemptions"] == 0
    assert {k: v for k, v in metric_values(never).items() if k != "n_preemptions"} == {
        k: v for k, v in metric_values(fcfs).items() if k != "n_preemptions"
    }
    default = run(base, 2)
    assert same(default, run({**base, "pfcfs_preset": "pfcfs1"}, 2))
    assert same(
        run({**base, "pfcfs_preset": "theory", "pfcfs_delay_s": 300}, 2),
        run(
            {
                **base,
                "pfcfs_delay_s": 300,
                "pfcfs_slice_s": "delay",
                "pfcfs_preempt": "all",
                "pfcfs_wait_half": True,
            },
            2,
        ),
    )
    for preset in ("pfcfs1", "pfcfs2", "pfcfs3", "theory"):
        params = {**base, "pfcfs_preset": preset}
        check_feasible(schedule(params, 2))
        values = run(params, 2)
        assert values["n_preemptions"] >= values["jobs_preempted"] > 0
