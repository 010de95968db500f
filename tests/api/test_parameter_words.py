"""An error says what to give in the words of the face it was called from: the function's
parameter from Python, the command's options on a command line."""

from __future__ import annotations

import pytest

import campaign
from campaign.cli.main import main

SPEC = {  # a Python model: no program, so no metrics parser of its own
    "name": "words",
    "model": "jobs",
    "params": {"workload": "synthetic", "jobs": 50, "processors": 16},
    "factors": {"scheduler": ["fcfs", "easy"]},
    "replicates": 1,
    "seed": 1,
}


def test_remetric_of_a_model_without_a_parser_names_source_or_the_options(tmp_path, capsys):
    """From Python it named the command line's --parse, --metrics-file and --stdout."""
    with pytest.raises(campaign.CampaignError) as caught:
        campaign.remetric({**SPEC, "output": str(tmp_path / "out")})
    assert str(caught.value) == (
        "remetric: model jobs is not a program and has no metrics: source of its own; give "
        "source, the parser of its kept outputs"
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: words\nmodel: jobs\nparams: {workload: synthetic, jobs: 50, processors: 16}\n"
        "factors: {scheduler: [fcfs, easy]}\nreplicates: 1\nseed: 1\noutput: out\n"
    )
    assert main(["remetric", str(spec)]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: remetric: model jobs is not a program and has no metrics: source of "
        "its own; give --parse, --metrics-file or --stdout, the parser of its kept outputs\n"
    )
    assert not (tmp_path / "out").exists()


def test_too_few_resamples_are_refused_with_the_minimum_there_is(tmp_path, capsys):
    """``resamples=1`` was told "must be >= 1", and 5 "use an integer of 10 or more"."""
    for given in (0, 1, 9):
        with pytest.raises(campaign.CampaignError) as caught:
            campaign.sensitivity(tmp_path / "none", "y", resamples=given)
        assert str(caught.value) == f"resamples {given} must be >= 10"
    argv = ["sensitivity", str(tmp_path / "none"), "--metric", "y", "--resamples", "1"]
    assert main(argv) == 2
    assert capsys.readouterr().err == "campaign: error: --resamples 1 must be >= 10\n"


def test_a_figure_written_to_out_and_to_figures_at_once_is_refused(tmp_path):
    """``plot(out=..., figures=True)`` wrote ``out`` alone: ``figures`` was left unused."""
    with pytest.raises(campaign.CampaignError) as caught:
        campaign.plot(tmp_path / "none", "y", out=tmp_path / "y.png", figures=True)
    assert str(caught.value) == (
        "out is the one file written, figures writes figures/NAME.png, .pdf and .svg beside "
        "results.nc: give one of them"
    )
    assert list(tmp_path.iterdir()) == []


def test_markdown_without_a_model_is_refused_not_a_list_without_tables(capsys):
    """``models(markdown=True)`` and ``campaign models --markdown`` gave the plain list."""
    with pytest.raises(campaign.CampaignError) as caught:
        campaign.models(markdown=True)
    assert str(caught.value) == "markdown gives one model's documentation tables: give name too"
    assert main(["models", "--markdown"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --markdown gives one model's documentation tables: give show NAME too\n"
    )
    assert campaign.models("jobs", markdown=True).startswith("Parameters:\n\n| parameter |")


def test_a_task_larger_than_a_worker_names_workers_or_the_option(tmp_path, capsys):
    """From Python the refusal said "use fewer --workers", the command line's option."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: large\nmodel:\n  command: [python3, -c, 'print(1)', '{a}']\n  metrics: stdout\n"
        "  resources: {cores: 100000}\nfactors: {a: [1, 2]}\nreplicates: 1\nseed: 1\n"
        "output: out\n"
    )
    with pytest.raises(campaign.CampaignError) as caught:
        campaign.run(spec, workers=1, progress=False)
    assert str(caught.value).endswith(": use fewer workers, or a cluster whose workers have more")
    assert main(["run", str(spec), "--workers", "1"]) == 2
    assert capsys.readouterr().err.endswith(
        ": use fewer --workers, or a cluster whose workers have more\n"
    )


def test_an_unknown_metric_among_metrics_names_metrics(capsys):
    """query, rank, plot and report take ``metrics``: the refusal named ``metric``."""
    import xarray as xr

    data = {"v": (("strategy", "replicate"), [[1.0], [2.0]])}
    data["status"] = (("strategy", "replicate"), [[1], [1]])
    results = xr.Dataset(data, coords={"strategy": ["a", "b"], "replicate": [0]})
    for call in (
        lambda: campaign.query(results, ["v", "w"]),
        lambda: campaign.rank(results, "strategy", "w"),
        lambda: campaign.plot(results, "w"),
    ):
        with pytest.raises(campaign.CampaignError) as caught:
            call()
        assert str(caught.value) == "metrics 'w' is not in the results; metrics: v"


def test_a_number_out_of_range_is_told_without_python_words(tmp_path, capsys):
    """``--task-timeout 0`` was told "must be a number > 0 or None, got float 0.0"."""
    spec = tmp_path / "never-read.yaml"
    with pytest.raises(campaign.CampaignError) as caught:
        campaign.run(spec, task_timeout=0)
    assert str(caught.value) == "task_timeout 0 must be a number > 0"
    spec.write_text(
        "name: words\nmodel: jobs\nparams: {workload: synthetic, jobs: 50, processors: 16}\n"
        "factors: {scheduler: [fcfs, easy]}\nreplicates: 1\nseed: 1\noutput: out\n"
    )
    assert main(["run", str(spec), "--task-timeout", "-1.5"]) == 2
    assert capsys.readouterr().err == "campaign: error: --task-timeout -1.5 must be a number > 0\n"
    assert not (tmp_path / "out").exists()
