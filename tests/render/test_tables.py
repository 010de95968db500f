"""`query --format markdown|latex|html`: the summary table for a paper or a page, each cell's
mean ± half-width and interval as results.nc holds them; and the warning of every format but
CSV and JSON when some interval rests on fewer than 5 replicates."""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

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


FAILED = "4 tasks failed in these cells: left out of the means and n (campaign status lists them)"


def test_markdown_table_holds_the_cells_of_the_results(paper_results, capsys):
    dataset = campaign.open_results(paper_results)
    lines = query(capsys, paper_results, "--format", "markdown").splitlines()
    assert lines[0] == "| arrival_rate | service_rate | mean_wait [s] | n |"
    assert lines[1] == "| --- | --- | ---: | ---: |"
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:8]]
    assert lines[8:] == [
        "",
        "mean ± half-width of the 95% confidence interval (Student t) over n replicates",
        FAILED,
        "warning: some intervals rest on 4 replicate(s) (fewer than 5): too few for an interval "
        "to say much; add replicates",
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
        f"% {FAILED}",
        "% warning: some intervals rest on 4 replicate(s) (fewer than 5): too few for an "
        "interval to say much; add replicates",
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
        FAILED,
        "mean_wait: 4 replicates left out (some pooled cell has no value in them); means and "
        "n are over complete replicates",
        "warning: some intervals rest on 4 replicate(s) (fewer than 5): too few for an interval "
        "to say much; add replicates",
    ]


def few(counts: list[int]) -> xr.Dataset:
    """A results file's metric v and status over tag x replicate, ``counts[i]`` replicates of
    6 finished in the cell of tag i."""
    done = np.arange(6) < np.array(counts)[:, None]
    values = np.where(done, np.arange(6.0) + np.arange(len(counts))[:, None], np.nan)
    return xr.Dataset(
        {"v": (("tag", "replicate"), values), "status": (("tag", "replicate"), done.astype("i1"))},
        {"tag": [f"t{i}" for i in range(len(counts))], "replicate": np.arange(6)},
        attrs={"confidence": 0.95},
    )


WARNING = (
    "warning: some intervals rest on {} replicate(s) (fewer than 5): too few for an interval to "
    "say much; add replicates"
)


def test_the_tables_warn_of_intervals_over_fewer_than_5_replicates():
    text = campaign.table(campaign.query(few([6, 2, 3]))).splitlines()
    assert text[-1] == WARNING.format(2)
    assert campaign.table(campaign.query(few([6, 2])), "markdown").splitlines()[-1] == (
        WARNING.format(2)
    )
    # a cell with no replicate has no interval to warn of; 5 replicates are enough
    assert "warning" not in campaign.table(campaign.query(few([5, 6, 0])))
    assert "warning" not in campaign.table(campaign.query(few([2, 6])), "csv")


def test_a_mean_of_one_replicate_is_counted_apart_from_the_intervals():
    """A cell of one replicate has a mean and no interval: the warning of few replicates
    counts the intervals shown, and a line of its own counts such means."""
    single = "warning: 1 mean(s) rest on 1 replicate, without an interval; add replicates"
    text = campaign.table(campaign.query(few([6, 1, 3]))).splitlines()
    assert text[-2:] == [WARNING.format(3), single]  # not "rest on 1 replicate(s)"
    assert text[3].split() == ["t1", "1", "1"]  # tag t1: its one value 1.0, no interval
    markdown = campaign.table(campaign.query(few([6, 5, 1])), "markdown").splitlines()
    assert markdown[-1] == single and "(fewer than 5)" not in "\n".join(markdown)


def test_a_table_counts_the_tasks_its_means_leave_out():
    """Failed and missing tasks of the cells queried are said under the table; with a
    precision target a cell's tasks are its replicates so far, not the padding past them."""
    results = few([6, 2, 3])
    results["status"][1, 2] = 2  # t1's third replicate failed; 3 + 3 not run
    note = "{} in these cells: left out of the means and n (campaign status lists them)"
    text = campaign.table(campaign.query(results)).splitlines()
    assert text[6] == note.format("1 tasks failed and 6 not run (missing)")
    markdown = campaign.table(campaign.query(results), "markdown").splitlines()
    assert note.format("1 tasks failed and 6 not run (missing)") in markdown
    one = campaign.query(results, where="tag=t0")  # one text: one condition
    assert one.equals(campaign.query(results, where=["tag=t0"])) and one["tag"].tolist() == ["t0"]
    alone = campaign.table(one).splitlines()
    assert not [line for line in alone if "in these cells" in line]
    results["precision_replicates"] = ("tag", [6, 3, 3])  # the rounds ran no more
    text = campaign.table(campaign.query(results)).splitlines()
    assert text[6] == note.format("1 tasks failed")
    results.attrs["incomplete"] = "written as a run set aside damaged records"
    text = campaign.table(campaign.query(results)).splitlines()
    assert text[7] == "results.nc written as a run set aside damaged records"
