"""Misuse of the `campaign` command is one line saying what is wrong and what is allowed,
exit status 2, no traceback (unless --debug, which is taken anywhere on the line)."""

from __future__ import annotations

import textwrap

import pytest

import campaign
from campaign.cli.main import main
from campaign.errors import CampaignError
from tests.conftest import error_line, finished_campaign

SPEC = """
name: usage
model: mm1
params: {customers: 200}
factors:
  arrival_rate: [0.3, 0.6]
  service_rate: {fast: 2.0, slow: 1.0}
replicates: 3
seed: 11
output: out
"""


results = finished_campaign("usage", SPEC)


def refused(capsys, *argv: str) -> str:
    """The one error line of a command that must exit 2."""
    assert main(list(argv)) == 2
    return error_line(capsys.readouterr().err)


def test_debug_is_taken_anywhere_on_the_line(results, tmp_path, capsys):
    message = "--metric 'nope' is not in the results; metrics: mean_wait, max_wait, utilization"
    assert refused(capsys, "query", str(results), "--metric", "nope") == message
    for argv in (
        ["--debug", "query", str(results), "--metric", "nope"],
        ["query", "--debug", str(results), "--metric", "nope"],
        ["query", str(results), "--metric", "nope", "--debug"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("Traceback (most recent call last):")
        assert err.endswith(f"campaign: error: {message}\n")
    spec = results.parent / "spec.yaml"
    assert main(["validate", str(spec), "--debug"]) == 0
    assert capsys.readouterr().out.endswith("spec is valid\n")
    # a model's own command too
    assert main(["workloads", "--folder", str(tmp_path), "list", "--debug"]) == 0
    assert capsys.readouterr().out == f"no traces in {tmp_path}\n"


@pytest.mark.parametrize("level", ["1.5", "0", "1", "-0.1", "nan"])
@pytest.mark.parametrize(
    "command",
    [
        ["query"],
        ["query", "--rank", "service_rate", "--metric", "mean_wait"],
        ["plot", "--metric", "mean_wait"],
    ],
)
def test_a_confidence_no_interval_has_is_refused(results, tmp_path, capsys, command, level):
    out = ["--out", str(tmp_path / "p.png")] if command[0] == "plot" else []
    argv = [command[0], str(results), *command[1:], *out, "--confidence", level]
    assert refused(capsys, *argv) == (
        f"--confidence {float(level)} is not allowed; use a number between 0 and 1 "
        "(exclusive), such as 0.95"
    )
    assert not (tmp_path / "p.png").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--x", "arrival_rate", "--by", "arrival_rate"],
            "--x and --by are both 'arrival_rate': the lines need another factor than the x "
            "axis (factors: arrival_rate, service_rate), or leave --by out",
        ),
        (["--x", "load"], "--x 'load' is not a factor; factors: arrival_rate, service_rate"),
        (["--by", "load"], "--by 'load' is not a factor; factors: arrival_rate, service_rate"),
    ],
)
def test_plot_axes_must_be_two_factors(results, tmp_path, capsys, options, message):
    out = tmp_path / "p.png"
    argv = ["plot", str(results), "--metric", "mean_wait", "--out", str(out), *options]
    assert refused(capsys, *argv) == message
    assert not out.exists()


def test_plot_by_the_default_x_factor_puts_another_on_the_x_axis(results):
    from campaign.render.figures import plot_metric

    dataset = campaign.open_results(results)
    figure = plot_metric(dataset, "mean_wait", by="arrival_rate")
    axes = figure.axes[0]
    assert axes.get_xlabel() == "service_rate"
    assert [t.get_text() for t in axes.get_xticklabels()] == ["fast", "slow"]
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["0.3", "0.6"]
    assert figure.legends[0].get_title().get_text() == "arrival_rate"
    for i, rate in enumerate([0.3, 0.6]):
        (points,) = [line for line in axes.lines if line.get_gid() == f"series{i}"]
        means = dataset["mean_wait"].sel(arrival_rate=rate).mean("replicate").values
        assert points.get_ydata().tolist() == pytest.approx(means.tolist(), rel=1e-12)
        assert points.get_xdata().tolist() == pytest.approx([-0.2 + 0.4 * i, 0.8 + 0.4 * i])


PNG = b"\x89PNG\r\n\x1a\n"


def test_plot_out_makes_its_folder_and_names_the_file_it_wrote(results, tmp_path, capsys):
    out = tmp_path / "figures" / "wait" / "p.png"
    assert main(["plot", str(results), "--metric", "mean_wait", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"plot: {out}\n"
    assert out.read_bytes()[:8] == PNG
    bare = tmp_path / "figures" / "bare"
    assert main(["plot", str(results), "--metric", "mean_wait", "--out", str(bare)]) == 0
    assert capsys.readouterr().out == f"plot: {bare}.png\n"
    assert (tmp_path / "figures" / "bare.png").read_bytes()[:8] == PNG


def test_plot_and_report_outputs_a_file_blocks_are_one_line(results, tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder\n")
    plot = ["plot", str(results), "--metric", "mean_wait", "--out"]
    assert refused(capsys, *plot, f"{blocker}/p.png") == (
        f"--out {blocker}/p.png: {blocker} is a file, not a folder"
    )
    assert refused(capsys, *plot, f"{blocker}/deeper/p.png") == (
        f"--out {blocker}/deeper/p.png: {blocker} is a file, not a folder"
    )
    assert refused(capsys, *plot, str(tmp_path)) == (
        f"--out {tmp_path} is a folder; give an image file such as {tmp_path / 'plot.png'}"
    )
    assert refused(capsys, *plot, str(tmp_path / "p.txt")).startswith(
        f"--out {tmp_path / 'p.txt'}: '.txt' is not an image format matplotlib writes; use "
        ".avif, .eps, "
    )
    for out in (blocker, blocker / "report"):
        assert refused(capsys, "report", str(results), "--out", str(out)) == (
            f"--out {out}: {blocker} is a file, not a folder"
        )
    assert blocker.read_text() == "a file, not a folder\n"
    # report --out is a folder: --out paper/report.html made paper/report.html/report.html
    page = tmp_path / "paper" / "report.html"
    assert refused(capsys, "report", str(results), "--out", str(page)) == (
        f"--out {page} names a page, but --out is the folder report.html and figures/ are "
        f"written into; give {page.parent}"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker"]


def test_a_file_that_is_not_campaign_results_is_one_line(results, tmp_path, capsys):
    import xarray as xr

    text = tmp_path / "notes.nc"
    text.write_text("not netCDF\n")
    torn = tmp_path / "torn" / "results.nc"
    torn.parent.mkdir()
    torn.write_bytes((results / "results.nc").read_bytes()[:4000])
    other = tmp_path / "other.nc"
    xr.Dataset({"a": ("x", [1.0, 2.0])}).to_netcdf(other)
    unreadable = "give the results.nc that `campaign run` wrote, or its folder"
    cases = [
        (text, f"{text} is not a readable netCDF file (NetCDF: Unknown file format); {unreadable}"),
        (torn.parent, f"{torn} is not a readable netCDF file (NetCDF: HDF error); {unreadable}"),
        (
            other,
            f"{other} is a netCDF file but not campaign results (no 'status' over 'replicate'); "
            f"{unreadable}",
        ),
    ]
    for path, message in cases:
        assert refused(capsys, "query", str(path)) == message
        assert refused(
            capsys, "plot", str(path), "--metric", "a", "--out", str(tmp_path / "p.png")
        ) == (message)
        assert refused(capsys, "report", str(path), "--out", str(tmp_path / "report")) == message
    assert not (tmp_path / "p.png").exists() and not (tmp_path / "report").exists()


def test_an_output_folder_a_file_blocks_is_one_line_before_any_work(
    tmp_path, scheduler_address, capsys
):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file\n")
    spec = tmp_path / "spec.yaml"
    for output in (blocker, blocker / "campaign"):
        spec.write_text(textwrap.dedent(SPEC).replace("output: out", f"output: {output}"))
        line = f"{spec}: output: {blocker} is a file; output must name a folder (made if missing)"
        assert refused(capsys, "run", str(spec), "--scheduler", scheduler_address) == line
        # validate and plan say so too, as `run` will: not "spec is valid", "2 tasks would run"
        assert refused(capsys, "validate", str(spec)) == line
        assert refused(capsys, "plan", str(spec)) == line
    assert blocker.read_text() == "a file\n"
    (tmp_path / "out" / "results.nc").mkdir(parents=True)
    spec.write_text(textwrap.dedent(SPEC))
    assert refused(capsys, "run", str(spec), "--scheduler", scheduler_address) == (
        f"{spec}: output: {tmp_path / 'out' / 'results.nc'} is not a file; move it away, "
        "`run` writes its results there"
    )
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["results.nc"]
    # given by --out (output=), the file is blamed on it, not on the spec's output key
    blocked = "{} is a file; it must name a folder (made if missing)".format
    argv = ["run", str(spec), "--scheduler", scheduler_address, "--out", str(blocker)]
    assert refused(capsys, *argv) == "--out " + blocked(blocker)
    assert refused(capsys, "plan", str(spec), "--out", str(blocker)) == "--out " + blocked(blocker)
    with pytest.raises(CampaignError) as info:
        campaign.run(spec, output=blocker / "campaign", scheduler=scheduler_address)
    assert str(info.value) == "output " + blocked(blocker)
    assert blocker.read_text() == "a file\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["query", "RESULTS", "--format", "xml"],
            "campaign query: error: argument --format: invalid choice: 'xml' (choose from "
            "'table', 'csv', 'json', 'markdown', 'latex', 'html'); `campaign query --help` "
            "lists the options",
        ),
        (
            ["query", "RESULTS", "--confidence", "high"],
            "campaign query: error: argument --confidence: invalid float value: 'high'; "
            "`campaign query --help` lists the options",
        ),
        (
            ["run"],
            "campaign run: error: the following arguments are required: spec; "
            "`campaign run --help` lists the options",
        ),
        (
            ["--debug"],
            "campaign: error: the following arguments are required: COMMAND; "
            "`campaign --help` lists the options",
        ),
    ],
)
def test_options_argparse_refuses_are_one_line_too(results, capsys, argv, message):
    argv = [str(results) if word == "RESULTS" else word for word in argv]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == f"{message}\n"


def python_error(call) -> str:
    with pytest.raises(CampaignError) as info:
        call()
    return str(info.value)


def test_library_errors_name_parameters_and_the_command_line_its_options(results, capsys):
    from campaign.cluster.open import check_cluster_options
    from campaign.design.shards import Shard

    spec = str(results.parent / "spec.yaml")
    shard = "expected I/N, shard I of N counted from 1 (such as 1/3)"
    assert python_error(lambda: Shard.parse("x")) == f"shard 'x': {shard}"
    assert refused(capsys, "run", spec, "--shard", "x") == f"--shard 'x': {shard}"
    assert python_error(lambda: campaign.verify(spec, sample=0)) == "sample 0 must be >= 1"
    assert refused(capsys, "verify", spec, "--sample", "0") == "--sample 0 must be >= 1"
    assert python_error(lambda: campaign.verify(spec, sample=1.5)) == (
        "sample must be a whole number >= 1, got float 1.5"
    )
    empty = "is empty: give tcp://HOST:PORT (or tls://HOST:PORT with {}), or leave it out"
    assert python_error(lambda: check_cluster_options(scheduler=" ")).startswith(
        "scheduler " + empty.format("security")
    )
    assert refused(capsys, "run", spec, "--scheduler", " ").startswith(
        "--scheduler " + empty.format("--security")
    )
    both = {"scheduler": "tcp://h:1", "cluster": "c.yaml"}
    assert python_error(lambda: check_cluster_options(**both)) == (
        "give scheduler or cluster, not both"
    )
    argv = ["run", spec, "--scheduler", "tcp://h:1", "--cluster", "c.yaml"]
    assert refused(capsys, *argv) == "give --scheduler or --cluster, not both"


def test_a_name_given_twice_is_refused_not_shown_twice(results, capsys):
    """``--by load --by load`` made a table with the column twice (and the API's DataFrame
    two columns of one name); ``--metric m --metric m`` showed the metric twice."""
    by = "by names 'arrival_rate' twice; give each name once"
    assert python_error(lambda: campaign.query(results, by=["arrival_rate"] * 2)) == by
    argv = ["query", str(results), "--by", "arrival_rate", "--by", "arrival_rate"]
    assert refused(capsys, *argv) == "--" + by
    metrics = "metrics names 'mean_wait' twice; give each name once"
    assert python_error(lambda: campaign.query(results, metrics=["mean_wait"] * 2)) == metrics
    argv = ["query", str(results), "--metric", "mean_wait", "--metric", "mean_wait"]
    assert refused(capsys, *argv) == "--metric names 'mean_wait' twice; give each name once"
    argv = ["compare", str(results), "--factor", "service_rate", "--baseline", "fast"]
    argv += ["--metric", "mean_wait"]
    assert refused(capsys, *argv, "--by", "arrival_rate", "--by", "arrival_rate") == "--" + by


@pytest.mark.parametrize(
    "options",
    [["--pilot", "0"], ["--target", "-1"], ["--job-cores", "4"], ["--workers", "2"]],
)
def test_the_pilot_options_without_estimate_are_refused(results, capsys, options):
    """``plan --pilot 0`` printed the plan and ignored the option (only --estimate runs a
    pilot), as it did --target, --job-cores and --workers."""
    spec = str(results.parent / "spec.yaml")
    assert refused(capsys, "plan", spec, *options) == (
        f"{options[0]} sizes the pilot of --estimate; give --estimate too, or leave it out"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--pilot", "0"], "--pilot 0 must be >= 1"),
        (["--target", "0"], "--target 0 must be a number of hours > 0"),
        (["--job-cores", "0"], "--job-cores 0 must be >= 1"),
    ],
)
def test_the_pilot_options_are_checked_before_the_pilot_runs(
    results, tmp_path, capsys, options, message
):
    """``plan --estimate --target 0`` ran the whole pilot, then said ``target_hours must be > 0
    and job_cores >= 1``, naming neither option."""
    spec = str(results.parent / "spec.yaml")
    fresh = tmp_path / "fresh"
    assert refused(capsys, "plan", spec, "--estimate", "--out", str(fresh), *options) == message
    assert not fresh.exists()
    with pytest.raises(CampaignError) as info:
        campaign.estimate(spec, target_hours=-1.0, output=fresh)
    assert str(info.value) == "target_hours -1 must be a number of hours > 0"
    assert not fresh.exists()


def test_a_negative_status_limit_is_refused(results, capsys):
    """``status --limit -1`` listed all the failed tasks but the last, then counted one more
    than there were left (``... 4 more failed tasks`` of 3)."""
    spec = str(results.parent / "spec.yaml")
    assert refused(capsys, "status", spec, "--limit", "-1") == "--limit -1 must be >= 0"
    assert main(["status", spec, "--limit", "0"]) == 0


def test_a_negative_number_of_metrics_shown_is_refused_before_the_run(tmp_path, capsys):
    """``run --show-metrics -2`` ran the campaign, then left the last 2 metrics out of its
    summary table (a slice from the end), saying nothing."""
    spec = str(tmp_path / "never-read.yaml")
    message = "--show-metrics -2 must be >= 0 (0: no table)"
    assert refused(capsys, "run", spec, "--show-metrics", "-2") == message


def test_by_with_a_ranking_is_refused(results, capsys):
    """``query --rank F --by G`` printed the ranking over every cell of G, --by ignored."""
    argv = ["query", str(results), "--rank", "service_rate", "--by", "arrival_rate"]
    assert refused(capsys, *argv) == (
        "--by is for query's table, not a ranking: --rank ranks the levels over every cell of "
        "the other factors; leave --by out, or give --where to rank within some levels"
    )


def test_pivot_with_a_ranking_is_refused_before_any_work(tmp_path, capsys):
    """Refused once the ranking was computed (the results read, every degradation); now
    before the results are read: a path with no results is not looked at."""
    argv = ["query", str(tmp_path / "none"), "--rank", "strategy", "--pivot", "load"]
    assert refused(capsys, *argv) == "--pivot is for query and compare tables, not a ranking"


def test_a_folder_of_finished_tasks_without_results_says_how_to_write_them(
    tmp_path, capsys, scheduler_address
):
    """A run stopped before its end leaves its ledger and no results.nc (a shard's folder
    never holds one): the commands that read results said only `no results file at ...`,
    while `status` counted the finished tasks."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    (tmp_path / "out" / "results.nc").unlink()  # as a run stopped before writing it leaves it
    for command in ("query", "report", "export"):
        assert refused(capsys, command, str(tmp_path / "out")) == (
            f"no results file at {tmp_path / 'out' / 'results.nc'}: the ledger beside it holds "
            "finished tasks of a run that stopped before writing it; `campaign run SPEC` "
            "writes it, running only what is missing"
        )
    campaign.run(spec, scheduler=scheduler_address, progress=False, shard="2/2")
    shard = tmp_path / "out" / "shard-2-of-2"
    assert refused(capsys, "plot", str(shard), "--metric", "mean_wait") == (
        f"no results file at {shard / 'results.nc'}: the folder of shard 2/2, which writes "
        "none; `campaign merge` joins the shards' folders and writes the campaign's"
    )
    for command in ("verify", "remetric"):  # said `give the spec file instead`: another folder
        assert refused(capsys, command, str(shard)) == (
            f"{shard}: no results.nc here: the folder of shard 2/2, which writes none; "
            "`campaign merge` joins the shards' folders and writes the campaign's"
        )
    assert refused(capsys, "query", str(tmp_path)) == (
        f"no results file at {tmp_path / 'results.nc'}"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["query", "--format", "csv", "--digits", "3"],
        [
            "query",
            "--rank",
            "arrival_rate",
            "--metric",
            "mean_wait",
            "--format",
            "json",
            "--digits",
            "2",
        ],
        [
            "compare",
            "--factor",
            "arrival_rate",
            "--baseline",
            "0.3",
            "--metric",
            "mean_wait",
            "--format",
            "csv",
            "--digits",
            "3",
        ],
        ["effects", "--metric", "mean_wait", "--format", "json", "--digits", "3"],
        ["select", "--format", "csv", "--digits", "3"],
    ],
)
def test_digits_with_csv_or_json_is_refused_before_any_work(tmp_path, capsys, argv):
    """Refused before the results are read: a path with no results is not looked at."""
    command, *options = argv
    fmt = options[options.index("--format") + 1]
    assert refused(capsys, command, str(tmp_path / "none"), *options) == (
        f"--digits is for the table, markdown, latex and html formats; {fmt} carries every "
        "number at full precision: leave --digits out"
    )


def test_digits_out_of_range_is_refused_before_any_work(tmp_path, capsys):
    argv = ["query", str(tmp_path / "none"), "--digits", "0"]
    assert refused(capsys, *argv) == "--digits 0: give a whole number from 1 to 15"


def test_second_order_with_another_method_than_sobol_is_refused_before_any_work(tmp_path, capsys):
    argv = ["sensitivity", str(tmp_path / "none"), "--metric", "y", "--second-order"]
    assert refused(capsys, *argv, "--method", "morris") == (
        "--second-order is for --method sobol (the Sobol indices of pairs of factors, on a "
        "saltelli design drawn with second_order: true); --method morris gives none: leave "
        "--second-order out"
    )


@pytest.mark.parametrize(
    ("attrs", "refusal"),
    [
        (
            {"design": "latin_hypercube"},
            "--second-order is for --method sobol (the Sobol indices of pairs of factors, on a "
            "saltelli design drawn with second_order: true); these results are of a "
            "latin_hypercube design, analysed by regression: leave --second-order out",
        ),
        (
            {"design": "saltelli", "design_second_order": "false"},
            "--second-order needs a saltelli design drawn with second_order: true (the points "
            "the pairs' indices need); these results' design was drawn with second_order: "
            "false: leave --second-order out, or run the campaign with second_order: true",
        ),
    ],
)
def test_second_order_of_a_design_without_pairs_is_refused_before_any_work(
    tmp_path, capsys, attrs, refusal
):
    """Judged from results.nc's design attributes alone: the metric named is not even looked
    for (the analysis would refuse it first, after reading every number)."""
    import xarray as xr

    from campaign.analysis.second_order import second_order_refusal

    path = tmp_path / "results.nc"
    xr.Dataset({"y": ("point", [1.0, 2.0])}, attrs=attrs).to_netcdf(path)
    argv = ["sensitivity", str(path), "--metric", "nope", "--second-order"]
    assert refused(capsys, *argv) == refusal
    assert second_order_refusal({"design": "saltelli", "design_second_order": "true"}, None) is None
