"""`query --format markdown|latex|html`: the summary table for a paper or a page, each cell's
mean ± half-width and interval as results.nc holds them."""

from __future__ import annotations

import math

import campaign
from campaign.cli.main import main
from tests.conftest import HTMLCells

LEVELS = [(a, s) for a in (0.05, 0.3, 0.9) for s in ("fast", "slow")]


def expected_rows(dataset, metric: str) -> list[list[str]]:
    """Per cell, the text the tables must show, read from the results file: the mean ± the
    half-width of its interval, the half-width to 2 significant digits and the mean to the
    same decimal place."""
    rows = []
    for rate, level in LEVELS:
        cell = dataset.sel(arrival_rate=rate, service_rate=level)
        mean = float(cell[f"{metric}_mean"])
        half = float(cell[f"{metric}_ci_high"] - cell[f"{metric}_ci_low"]) / 2
        place = math.floor(math.log10(half)) - 1
        decimals = max(0, -place)
        shown = f"{round(mean, -place):.{decimals}f} ± {round(half, -place):.{decimals}f}"
        rows.append([str(rate), level, shown, str(int(cell[f"{metric}_n"]))])
    return rows


def query(capsys, results, *options: str) -> str:
    assert main(["query", str(results), "--metric", "mean_wait", *options]) == 0
    return capsys.readouterr().out


def test_markdown_table_holds_the_cells_of_the_results(paper_results, capsys):
    dataset = campaign.open_results(paper_results)
    lines = query(capsys, paper_results, "--format", "markdown").splitlines()
    assert lines[0] == "| arrival_rate | service_rate | mean_wait [s] | n |"
    assert lines[1] == "| --- | --- | ---: | ---: |"
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:8]]
    assert lines[8:] == [
        "",
        "mean ± half-width of the 95% confidence interval (Student t) over n replicates",
    ]
    assert rows == expected_rows(dataset, "mean_wait")
    assert [row[-1] for row in rows] == ["4", "4", "6", "6", "6", "6"]  # 4 tasks failed


def test_latex_table_is_booktabs_with_escaped_names(paper_results, capsys):
    dataset = campaign.open_results(paper_results)
    text = query(capsys, paper_results, "--format", "latex")
    lines = text.splitlines()
    assert lines[:4] == [
        r"\begin{tabular}{llrr}",
        r"\toprule",
        r"arrival\_rate & service\_rate & mean\_wait [s] & n \\",
        r"\midrule",
    ]
    end = lines.index(r"\bottomrule")
    assert lines[end:] == [
        r"\bottomrule",
        r"\end{tabular}",
        "% mean ± half-width of the 95% confidence interval (Student t) over n replicates",
    ]
    rows = [line.removesuffix(r" \\").split(" & ") for line in lines[4:end]]
    assert rows == [
        [row[0], row[1], row[2].replace("±", r"$\pm$"), row[3]]
        for row in expected_rows(dataset, "mean_wait")
    ]


def test_html_table_and_its_notes(paper_results, capsys):
    dataset = campaign.open_results(paper_results)
    parser = HTMLCells()
    parser.feed(query(capsys, paper_results, "--format", "html"))
    assert parser.rows[0] == ["arrival_rate", "service_rate", "mean_wait [s]", "n"]
    assert parser.rows[1:] == expected_rows(dataset, "mean_wait")
    # pooled over the arrival rates, the replicates where some rate failed are left out
    parser = HTMLCells()
    parser.feed(query(capsys, paper_results, "--format", "html", "--by", "service_rate"))
    assert [row[-1] for row in parser.rows[1:]] == ["4", "4"]
    assert parser.notes == [
        "mean ± half-width of the 95% confidence interval (Student t) over n replicates",
        "mean_wait: 4 replicates left out (some pooled cell has no value in them); means and "
        "n are over complete replicates",
    ]
