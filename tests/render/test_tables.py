"""`query --format markdown|latex|html`: the summary table for a paper or a page, each cell's
mean ± half-width and interval as results.nc holds them."""

from __future__ import annotations

from html.parser import HTMLParser

import campaign
from campaign.cli.main import main

LEVELS = [(a, s) for a in (0.05, 0.3, 0.9) for s in ("fast", "slow")]


def expected_rows(dataset, metric: str) -> list[list[str]]:
    """Per cell, the text the tables must show, read from the results file."""
    rows = []
    for rate, level in LEVELS:
        cell = dataset.sel(arrival_rate=rate, service_rate=level)
        mean = float(cell[f"{metric}_mean"])
        low, high = float(cell[f"{metric}_ci_low"]), float(cell[f"{metric}_ci_high"])
        rows.append(
            [
                str(rate),
                level,
                f"{mean:.6g} ± {(high - low) / 2:.3g}",
                f"[{low:.6g}, {high:.6g}]",
                str(int(cell[f"{metric}_n"])),
            ]
        )
    return rows


def query(capsys, results, *options: str) -> str:
    assert main(["query", str(results), "--metric", "mean_wait", *options]) == 0
    return capsys.readouterr().out


def test_markdown_table_holds_the_cells_of_the_results(paper_results, capsys):
    dataset = campaign.open_results(paper_results)
    lines = query(capsys, paper_results, "--format", "markdown").splitlines()
    assert lines[0] == "| arrival_rate | service_rate | mean_wait [s] | 95% interval | n |"
    assert lines[1] == "| --- | --- | ---: | ---: | ---: |"
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    assert rows == expected_rows(dataset, "mean_wait")
    assert [row[-1] for row in rows] == ["4", "4", "6", "6", "6", "6"]  # 4 tasks failed


def test_latex_table_is_booktabs_with_escaped_names(paper_results, capsys):
    dataset = campaign.open_results(paper_results)
    text = query(capsys, paper_results, "--format", "latex")
    lines = text.splitlines()
    assert lines[:4] == [
        r"\begin{tabular}{llrrr}",
        r"\toprule",
        r"arrival\_rate & service\_rate & mean\_wait [s] & 95\% interval & n \\",
        r"\midrule",
    ]
    assert lines[-2:] == [r"\bottomrule", r"\end{tabular}"]
    rows = [line.removesuffix(r" \\").split(" & ") for line in lines[4:-2]]
    assert rows == [
        [row[0], row[1], row[2].replace("±", r"$\pm$"), row[3], row[4]]
        for row in expected_rows(dataset, "mean_wait")
    ]


class Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.notes, self.inside = [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th", "p"):
            self.inside = tag

    def handle_endtag(self, tag):
        self.inside = None

    def handle_data(self, data):
        if self.inside in ("td", "th"):
            self.rows[-1].append(data)
        elif self.inside == "p":
            self.notes.append(data)


def test_html_table_and_its_notes(paper_results, capsys):
    dataset = campaign.open_results(paper_results)
    parser = Cells()
    parser.feed(query(capsys, paper_results, "--format", "html"))
    assert parser.rows[0] == ["arrival_rate", "service_rate", "mean_wait [s]", "95% interval", "n"]
    assert parser.rows[1:] == expected_rows(dataset, "mean_wait")
    # pooled over the arrival rates, the replicates where some rate failed are left out
    parser = Cells()
    parser.feed(query(capsys, paper_results, "--format", "html", "--by", "service_rate"))
    assert [row[-1] for row in parser.rows[1:]] == ["4", "4"]
    assert parser.notes == [
        "mean_wait: 4 replicates left out (some pooled cell has no value in them); means and "
        "n are over complete replicates"
    ]
