"""Tables for a paper through the one renderer: `query`, `compare`, `effects` and rankings in
Markdown, LaTeX (booktabs; compiled by pdflatex) and HTML, each number to the digits its
interval supports (or --digits), one interval notation (value ± half-width), and pivots."""

from __future__ import annotations

import math
import re
import subprocess

import numpy as np
import pytest

import campaign
from campaign.cli.main import main
from tests.conftest import HTMLCells

RATES = [0.05, 0.3, 0.9]


def cli(capsys, *argv: str) -> str:
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def to_interval(mean: float, half: float) -> str:
    """What a paper table writes, by the rule it documents: the half-width to 2 significant
    digits, the mean to the same decimal place."""
    place = math.floor(math.log10(half)) - 1  # the place of the half-width's second digit
    decimals = max(0, -place)
    return f"{round(mean, -place):.{decimals}f} ± {round(half, -place):.{decimals}f}"


def markdown_rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("|")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines]


def test_the_digits_follow_each_interval_or_digits(paper_results, capsys):
    dataset = campaign.open_results(paper_results)
    rows = markdown_rows(
        cli(capsys, "query", paper_results, "--metric", "mean_wait", "--format", "markdown")
    )
    assert rows[0] == ["arrival_rate", "service_rate", "mean_wait [s]", "n"]
    expected = []
    for rate in RATES:
        for level in ("fast", "slow"):
            cell = dataset.sel(arrival_rate=rate, service_rate=level)
            half = float(cell["mean_wait_ci_high"] - cell["mean_wait_ci_low"]) / 2
            mean = float(cell["mean_wait_mean"])
            expected.append(
                [str(rate), level, to_interval(mean, half), str(int(cell["mean_wait_n"]))]
            )
    assert rows[2:] == expected
    # --digits: the mean to that many significant digits, the half-width to its place
    argv = [
        "query",
        paper_results,
        "--metric",
        "mean_wait",
        "--format",
        "markdown",
        "--digits",
        "3",
    ]
    cell = dataset.sel(arrival_rate=0.9, service_rate="slow")
    mean = float(cell["mean_wait_mean"])
    half = float(cell["mean_wait_ci_high"] - cell["mean_wait_ci_low"]) / 2
    decimals = 2 - int(np.floor(np.log10(abs(mean))))
    assert markdown_rows(cli(capsys, *argv))[-1][2] == f"{mean:.{decimals}f} ± {half:.{decimals}f}"


def test_a_pivot_puts_a_factors_levels_across(paper_results, capsys):
    argv = ["query", paper_results, "--metric", "mean_wait", "--pivot", "service_rate"]
    flat = markdown_rows(cli(capsys, *argv[:4], "--format", "markdown"))[2:]
    rows = markdown_rows(cli(capsys, *argv, "--format", "markdown"))
    assert rows[0] == [
        "arrival_rate",
        "service_rate = fast: mean_wait [s]",
        "service_rate = fast: n",
        "service_rate = slow: mean_wait [s]",
        "service_rate = slow: n",
    ]
    by_cell = {(r[0], r[1]): r[2:] for r in flat}
    assert rows[2:] == [
        [str(rate), *by_cell[str(rate), "fast"], *by_cell[str(rate), "slow"]] for rate in RATES
    ]
    # HTML: the levels as spanning headers
    page = cli(capsys, *argv, "--format", "html")
    assert (
        '<tr class="groups"><th colspan="1"></th><th colspan="2">service_rate = fast</th>' in page
    )
    # CSV: the same numbers at full precision, a column per statistic and level
    wide = cli(capsys, *argv, "--format", "csv").splitlines()
    long = cli(capsys, *argv[:4], "--format", "csv").splitlines()
    assert wide[0].split(",")[:3] == [
        "arrival_rate",
        "mean_wait_mean[service_rate=fast]",
        "mean_wait_half_width[service_rate=fast]",
    ]
    first = long[1].split(",")  # arrival_rate 0.05, fast
    assert wide[1].split(",")[1] == first[2]


def test_a_pivot_is_grouped_by_without_naming_it_in_by(paper_results, capsys):
    argv = ["query", paper_results, "--metric", "mean_wait", "--format", "markdown"]
    pivoted = cli(capsys, *argv, "--pivot", "service_rate")
    assert cli(capsys, *argv, "--by", "arrival_rate", "--pivot", "service_rate") == pivoted
    # the Python API: the query given the pivot groups by it, and its table puts it across
    frame = campaign.query(paper_results, "mean_wait", by="arrival_rate", pivot="service_rate")
    assert campaign.table(frame, "markdown") == pivoted
    # a comparison grouped by nothing else, its pivot still a row
    compared = campaign.compare(paper_results, "service_rate", "fast", "mean_wait", by=[])
    assert compared["difference"].dims == ("service_rate",)
    across = campaign.compare(
        paper_results, "service_rate", "fast", "mean_wait", by=[], pivot="arrival_rate"
    )
    argv = ["compare", paper_results, "--factor", "service_rate", "--baseline", "fast"]
    assert campaign.table(across, "csv") == cli(
        capsys, *argv, "--metric", "mean_wait", "--pivot", "arrival_rate", "--format", "csv"
    )
    # a pivot that is no factor: one line naming the option
    assert main(["query", str(paper_results), "--pivot", "nope"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --pivot 'nope' is not a factor; factors: arrival_rate, service_rate\n"
    )
    # a table made without the pivot among its rows, in any format: one line, no traceback
    flat = campaign.query(paper_results, "mean_wait", by="arrival_rate")
    for fmt in ("text", "csv"):
        with pytest.raises(campaign.CampaignError) as caught:
            campaign.table(flat, fmt, pivot="service_rate")
        assert str(caught.value) == (
            "pivot 'service_rate' is not a factor of the table's rows; rows: arrival_rate "
            "(a query or comparison given the pivot groups by it)"
        )


def test_compare_writes_each_difference_and_ratio_with_its_interval(paper_results, capsys):
    result = campaign.compare(paper_results, "service_rate", "fast", "mean_wait")
    argv = ["compare", paper_results, "--factor", "service_rate", "--baseline", "fast"]
    rows = markdown_rows(cli(capsys, *argv, "--metric", "mean_wait", "--format", "markdown"))
    assert rows[0] == [
        "arrival_rate",
        "service_rate",
        "n",
        "fast (baseline) [s]",
        "mean [s]",
        "difference [s]",
        "ratio",
    ]
    for row, rate in zip(rows[2:], RATES):
        one = result.sel(arrival_rate=rate, service_rate="slow")
        assert row[:3] == [str(rate), "slow", str(int(one["n"]))]
        assert row[5] == to_interval(float(one["difference"]), float(one["difference_half_width"]))
        ratio_half = float(one["ratio_high"] - one["ratio_low"]) / 2
        assert row[6] == to_interval(float(one["ratio"]), ratio_half)


def test_effects_and_rankings_for_a_page(paper_results, capsys):
    parser = HTMLCells()
    parser.feed(cli(capsys, "effects", paper_results, "--metric", "mean_wait", "--format", "html"))
    assert parser.rows[0] == ["rank", "term", "df", "share (%)", "F", "p", "tested against"]
    assert [row[0] for row in parser.rows[1:4]] == ["1", "2", "3"]
    assert {row[1] for row in parser.rows[1:4]} == {
        "arrival_rate",
        "service_rate",
        "arrival_rate:service_rate",
    }
    rows = markdown_rows(
        cli(capsys, "query", paper_results, "--rank", "service_rate", "--format", "markdown")
    )
    assert rows[0] == ["rank", "service_rate", "D_means(%)", "D_replicates(%) ± half-width", "n"]
    assert [row[:2] for row in rows[2:]] == [["1", "fast"], ["2", "slow"]]
    assert " ± " in rows[3][3]


@pytest.fixture
def latex_tables(demo_results, capsys) -> list[str]:
    """Every table of the small demo in LaTeX, as the commands print them."""
    metrics = ["--metric", "mean_wait", "--metric", "mean_bsld"]
    return [
        cli(capsys, "query", demo_results, *metrics, "--pivot", "scheduler", "--format", "latex"),
        cli(
            capsys, "query", demo_results, *metrics, "--metric", "utilization", "--format", "latex"
        ),
        cli(
            capsys,
            "compare",
            demo_results,
            "--factor",
            "scheduler",
            "--baseline",
            "fcfs",
            "--metric",
            "mean_wait",
            "--format",
            "latex",
        ),  # fmt: skip
        cli(capsys, "effects", demo_results, "--metric", "mean_wait", "--format", "latex"),
        cli(capsys, "query", demo_results, "--rank", "scheduler", "--format", "latex"),
    ]


def test_latex_tables_of_the_demo_compile_with_pdflatex(latex_tables, demo_results, tmp_path):
    document = tmp_path / "tables.tex"
    body = "\n\\bigskip\n\n".join(r"{\small" + "\n" + t + "}" for t in latex_tables)
    document.write_text(
        "\\documentclass{article}\n\\usepackage[margin=1cm,landscape]{geometry}\n"
        "\\usepackage{booktabs}\n\\begin{document}\n" + body + "\n\\end{document}\n"
    )
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", document.name],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    log = (tmp_path / "tables.log").read_text(errors="replace")
    assert run.returncode == 0, run.stdout[-3000:]
    assert "Missing character" not in log and "Overfull" not in log
    text = subprocess.run(
        ["pdftotext", "-layout", "tables.pdf", "-"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    dataset = campaign.open_results(demo_results)
    cell = dataset.sel(scheduler="easy", load=1.5)
    half = float(cell["mean_wait_ci_high"] - cell["mean_wait_ci_low"]) / 2
    expected = to_interval(float(cell["mean_wait_mean"]), half)
    assert expected in text  # typeset as written: the ± a real plus-minus sign
    assert "scheduler = conservative" in text  # the pivot's groups
    assert re.search(r"\n\s*1\s+scheduler\s+2\s", text)  # what matters most, first
