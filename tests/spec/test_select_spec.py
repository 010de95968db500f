"""The select: block is checked like every key: one line naming the key and what is allowed,
before anything runs."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.design.groups import group_levels, selection_groups
from campaign.design.shards import owners
from campaign.design.tasks import Design
from campaign.errors import CampaignError
from campaign.spec.load import parse_spec
from campaign.spec.types import Selection
from tests.conftest import error_line

BASE = {
    "name": "s",
    "model": "normal",
    "params": {"means": [0.0, 1.0, 2.0], "sds": [1.0, 1.0, 1.0]},
    "factors": {"system": [0, 1, 2], "tag": ["a", "b"]},
    "seed": 1,
}
SELECT = {"metric": "value", "goal": "max", "among": "system", "indifference": 0.5}


def spec_with(select=None, **keys):
    return parse_spec({**BASE, "select": {**SELECT, **(select or {})}, **keys})


def test_a_select_block_with_its_defaults():
    spec = spec_with()
    assert spec.selection == Selection(
        metric="value", goal="max", indifference=0.5, among="system", procedure="kn"
    )
    assert (spec.selection.pcs, spec.selection.first, spec.selection.batch) == (0.95, 10, 5)
    assert spec.replicates == spec.selection.max_replicates == 1000
    assert spec_with({"procedure": "ocba", "budget": 100}).selection.budget == 100


@pytest.mark.parametrize(
    ("select", "message"),
    [
        ({"among": "load"}, "select.among: 'load' is not a factor; factors: system, tag"),
        ({"procedure": "best"}, "select.procedure: 'best' is not allowed; use one of kn, kn++, "),
        ({"goal": "lowest"}, "select.goal: 'lowest' is not allowed; use min or max"),
        ({"indifference": 0}, "select.indifference: 0 is not allowed; use a finite number > 0"),
        ({"indifference": float("nan")}, "select.indifference: nan is not allowed"),
        ({"pcs": 0.3}, "select.pcs: 0.3 is not allowed; use a number between 1/3 (a random"),
        ({"pcs": 1}, "select.pcs: 1 is not allowed"),
        ({"first": 1}, "select.first: 1 is not allowed; use an integer >= 2"),
        ({"batch": 0}, "select.batch: 0 is not allowed; use an integer >= 1"),
        ({"max_replicates": 5}, "select.max_replicates: 5 is not allowed; use an integer >= 10"),
        ({"budget": 100}, "select.budget: only ocba spends a budget; kn stops once one system"),
        ({"procedure": "ocba"}, "select: missing key 'budget' (tasks per group that ocba spends)"),
        (
            {"procedure": "ocba", "budget": 20},
            "select.budget: 20 is not allowed; use an integer >= 30",
        ),
        ({"rounds": 3}, "select.rounds: only gsp screens in a fixed number of rounds, not kn"),
        ({"metric": "a b"}, "select.metric: metric name 'a b' is not allowed"),
        ({"relative": "yes"}, "select.relative: 'yes' is not allowed; use true or false"),
        ({"delta": 1}, "select: unknown key 'delta'; allowed: metric, goal, among, procedure, "),
    ],
)
def test_select_errors(select, message):
    with pytest.raises(CampaignError) as info:
        spec_with(select)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_relative_indifference_of_one_or_more_is_refused():
    """``indifference: 5`` with ``relative: true`` was a zone of 500% of the best mean."""
    with pytest.raises(CampaignError) as info:
        spec_with({"indifference": 5, "relative": True})
    assert str(info.value) == (
        "select.indifference: 5 is a share of the best first-stage mean (relative: true), 500% "
        "of it; use a number below 1 (0.05 for 5%), or relative: false for a difference in the "
        "metric's units"
    )
    assert spec_with({"indifference": 5}).selection.indifference == 5


def test_select_is_incompatible_with_replicates_and_precision():
    with pytest.raises(CampaignError, match="give replicates or select .*, not both"):
        spec_with(replicates=5)
    precision = {"metrics": ["value"], "half_width": 0.1, "max_replicates": 9}
    with pytest.raises(CampaignError, match="give precision or select .*, not both"):
        spec_with(precision=precision)
    for key in ("metric", "goal", "indifference"):
        select = {k: v for k, v in SELECT.items() if k != key}
        with pytest.raises(CampaignError, match=f"select: missing key '{key}'"):
            parse_spec({**BASE, "select": select})


def test_gsp_refuses_systems_that_share_seeds_kn_takes_them():
    assert spec_with({"procedure": "kn"}, paired=["system"]).paired == ("system",)
    with pytest.raises(CampaignError, match="gsp assumes independent systems, but paired lists"):
        spec_with({"procedure": "gsp"}, paired=["system"])
    assert spec_with({"procedure": "gsp"}, paired=["tag"]).selection.procedure == "gsp"


def test_one_system_a_group_and_other_designs_are_refused():
    one = {**BASE, "factors": {"system": [0], "tag": ["a", "b"]}}
    with pytest.raises(CampaignError, match="1 system per group; selecting the best needs"):
        parse_spec({**one, "select": SELECT})
    fraction = {
        **BASE,
        "factors": {"system": [0, 1], "tag": ["a", "b"], "x": [1, 2]},
        "design": {"fractional": {"generators": {"x": "system*tag"}}},
    }
    with pytest.raises(CampaignError, match="select: needs the full factorial design"):
        parse_spec({**fraction, "select": SELECT})


def test_the_metric_must_be_kept_and_declared(write_spec, capsys):
    with pytest.raises(CampaignError, match="select.metric: 'value' is not among the kept"):
        spec_with(metrics=["other"])
    from campaign.cli.main import main

    path = write_spec(
        """
        name: s
        model: normal
        params: {means: [0.0, 1.0], sds: [1.0, 1.0]}
        factors: {system: [0, 1]}
        select: {metric: valeu, goal: max, among: system, indifference: 0.5}
        seed: 1
        """
    )
    assert main(["validate", str(path)]) == 2
    assert error_line(capsys.readouterr().err) == (
        f"{path}: select.metric: 'valeu' is not a metric of model normal; its metrics: value"
    )


def test_groups_are_the_other_factors_cells_and_shards_deal_them_whole():
    spec = parse_spec(
        {**BASE, "factors": {"tag": ["a", "b"], "system": [0, 1, 2]}, "select": SELECT}
    )
    design = Design(spec)
    groups = selection_groups(design)
    assert [group.tolist() for group in groups] == [[0, 1, 2], [3, 4, 5]]
    assert [group_levels(design, group) for group in groups] == [{"tag": "a"}, {"tag": "b"}]
    spec = spec_with()  # system first: a group's cells are apart
    design = Design(spec)
    assert [group.tolist() for group in selection_groups(design)] == [[0, 2, 4], [1, 3, 5]]
    dealt = owners(design, 2).reshape(len(design.cells), -1)
    for group in selection_groups(design):
        assert len(np.unique(dealt[group])) == 1  # a group's tasks in one shard
    assert sorted(np.unique(dealt[:, 0]).tolist()) == [0, 1]
    whole = parse_spec({**BASE, "select": {k: v for k, v in SELECT.items() if k != "among"}})
    assert [group.tolist() for group in selection_groups(Design(whole))] == [list(range(6))]


def test_the_plan_says_how_each_procedure_ends_and_when_pairing_helps():
    """GSP stops after its screening rounds and a final Rinott stage, not only when one
    system is left, and takes no common random numbers: its line does not advise them. OCBA
    splits batch x systems more a stage by its ratios, not batch more to each system."""
    from campaign.spec.describe import describe_selection

    kn = describe_selection(spec_with())[1]
    assert kn.endswith(
        "10 replicates first, 5 more per stage until one system is left (at most 1000 "
        "each); independent systems (paired: [system] for common random numbers)"
    )
    gsp = describe_selection(spec_with({"procedure": "gsp", "rounds": 4}))[1]
    assert gsp.endswith(
        "10 replicates first, then 4 screening rounds of about 5 more per system (sized to "
        "its deviation) and a final Rinott stage, until one system is left or the final "
        "stage has run (at most 1000 each); independent systems (gsp assumes them)"
    )
    ocba = describe_selection(spec_with({"procedure": "ocba", "budget": 100}))[1]
    assert ocba.endswith(
        "10 replicates first, then 5 x 3 more per stage, split by OCBA's ratios, until 100 "
        "tasks per group are spent (at most 1000 each); independent systems (paired: [system] "
        "for common random numbers)"
    )
