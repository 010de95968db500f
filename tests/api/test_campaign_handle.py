"""`campaign.open`: one campaign opened from a spec file, a dict or an output folder, each
command a method of it giving what the API's function gives."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import yaml

import campaign
from campaign.errors import CampaignError
from tests.conftest import MM1_TWO_LOADS


def test_a_spec_file_a_dict_and_the_output_folder_open_one_campaign(paper_results, monkeypatch):
    spec_file = paper_results.parent / "spec.yaml"
    from_file = campaign.open(spec_file)
    monkeypatch.chdir(paper_results.parent)  # a dict's relative output: the working folder
    from_dict = campaign.open(yaml.safe_load(spec_file.read_text()))
    from_folder = campaign.open(paper_results)
    for opened in (from_file, from_dict, from_folder):
        assert isinstance(opened, campaign.Campaign)
        assert opened.name == "paper" and opened.output == paper_results
        assert opened.spec.params == from_file.spec.params
        assert opened.results_path == paper_results / "results.nc"
    assert repr(from_folder) == f"<Campaign paper in {paper_results}>"


def test_its_methods_give_what_the_functions_give(paper_results):
    opened = campaign.open(paper_results)
    stands = opened.status()
    again = campaign.status(paper_results.parent / "spec.yaml")
    assert (stands.done, stands.failed, stands.missing) == (again.done, again.failed, [])
    assert stands.done == 32 and len(stands.failed) == 4  # the fixture's 4 failed tasks
    planned = opened.plan()
    assert sorted(planned.to_run) == sorted(stands.failed)
    results = opened.results()
    assert np.array_equal(
        results["mean_wait"].values,
        campaign.open_results(paper_results)["mean_wait"].values,
        equal_nan=True,
    )
    with pytest.raises(CampaignError, match="none of the 36 stored tasks kept outputs"):
        opened.outputs()


def test_a_shard_opened_works_in_its_own_folder_and_merges_nothing(paper_results):
    shard = campaign.open(paper_results.parent / "spec.yaml", shard="2/3")
    assert shard.output == paper_results / "shard-2-of-3"
    assert shard.status().done == 0  # nothing ran in that folder
    with pytest.raises(CampaignError, match="shard: merge joins a campaign's shards"):
        shard.merge()


def test_a_folder_without_results_is_refused_in_one_line(tmp_path):
    with pytest.raises(CampaignError) as caught:
        campaign.open(tmp_path)
    assert str(caught.value) == f"{tmp_path}: no results.nc here; give the spec file instead"
    with pytest.raises(CampaignError) as caught:
        campaign.open(42)
    assert str(caught.value) == (
        "target must be a spec file's path, an output folder, a dict (a spec file's keys) or a "
        "Spec, got int"
    )


def test_plan_and_models_name_a_function_and_a_package_alike():
    """campaign.plan(spec) and campaign.models() are the API's functions, and the packages of
    those names are reached through them as through any package, whichever came first."""
    import campaign.plan.state as state  # the package's module, through the function's name
    from campaign.plan.state import RunState

    assert state.RunState is RunState and sys.modules["campaign.plan.state"] is state
    assert campaign.plan.state is state and campaign.models.contract.Model.__name__ == "Model"
    assert campaign.plan.__name__ == "plan" and "Where each task stands" in campaign.plan.__doc__
    assert "jobs" in campaign.models() and "mm1" not in campaign.models().split()
    assert campaign.plan is campaign.plan and campaign.open is campaign.api.open


def test_a_handle_reads_its_spec_again_after_a_run_of_another_spec(tmp_path, scheduler_address):
    """A handle opened before the spec was edited and run again (more replicates) counts,
    runs and writes with the spec as it is now, never with the one it first read."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(MM1_TWO_LOADS)  # 2 cells, 4 replicates
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    from_folder, from_file = campaign.open(tmp_path / "out"), campaign.open(spec)
    assert from_folder.status().done == from_file.status().done == 8
    spec.write_text(MM1_TWO_LOADS.replace("replicates: 4", "replicates: 6"))
    campaign.run(spec, scheduler=scheduler_address, progress=False)  # as another process would
    for opened in (from_folder, from_file):
        assert opened.spec.replicates == 6
        assert (opened.status().done, opened.plan().to_run) == (12, [])
    results = from_folder.run(scheduler=scheduler_address, progress=False)  # nothing to run
    assert results.sizes["replicate"] == 6
    written = campaign.query(tmp_path / "out", "mean_wait", by="arrival_rate")
    assert written["mean_wait_n"].tolist() == [6, 6]  # not the first spec's 4
