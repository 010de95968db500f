"""`campaign report`: one self-contained HTML page, opened in a real headless browser
(Debian's chromium): every figure decodes at the size of its file, and the tables show the
numbers of results.nc, the failed tasks with their error line and the provenance."""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml
from matplotlib import image

import campaign
from campaign.cli.main import main
from campaign.render.comparison import render_comparison
from campaign.render.effects import render_effects
from tests.render.test_tables import expected_rows

BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",  # the tests may run as root
    "--disable-gpu",
    "--disable-background-networking",  # the machine has no network to speak of
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--virtual-time-budget=10000",  # let the page finish: virtual time, not a clock
]
# Appended to a copy of the page: after the load event, what the browser made of it, written
# into the DOM (images: decoded size; tables: the text as rendered).
PROBE = """<script>
window.addEventListener("load", () => {
  const images = [...document.images].map(i => ({
    alt: i.alt, complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}));
  const tables = [...document.querySelectorAll("table")].map(t =>
    [...t.rows].map(r => [...r.cells].map(c => c.innerText)));
  const blocks = [...document.querySelectorAll("pre")].map(p => p.innerText);
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({images, tables, blocks});
  document.body.appendChild(out);
});
</script>"""
LEVELS = [(a, s) for a in (0.05, 0.3, 0.9) for s in ("fast", "slow")]
REPO = Path(__file__).resolve().parents[2]


def chromium() -> str:
    path = shutil.which("chromium")
    assert path, "Debian's chromium is needed for this test: apt-get install chromium"
    return path


def browse(page, tmp_path, *options: str) -> str:
    """Run headless chromium on a file; its standard output."""
    done = subprocess.run(
        [chromium(), *BROWSER_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *options,
         page.resolve().as_uri()],
        capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    return done.stdout


def png_size(path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])  # the IHDR chunk
    return width, height


@pytest.fixture(scope="module")
def report(paper_results):
    """The report of the M/M/1 campaign with 4 failed tasks, written by the command."""
    assert main(["report", str(paper_results)]) == 0
    return paper_results / "report.html"


def test_the_page_is_one_file_with_no_outside_reference(report):
    text = report.read_text()
    assert "<script" not in text and "<link" not in text
    sources = re.findall(r'src="([^"]*)"', text)
    assert len(sources) == 3 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert not re.search(r'(href|src)="(https?:|file:|/)', text)


def test_the_browser_renders_every_figure_and_the_numbers_of_the_results(report, tmp_path):
    results = report.parent
    dataset = campaign.open_results(results)
    failures = campaign.open_failures(results)
    probed = tmp_path / "probed.html"
    probed.write_text(report.read_text().replace("</body>", PROBE + "</body>"))
    dom = browse(probed, tmp_path, "--dump-dom")
    seen = json.loads(html.unescape(re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)[1]))

    metrics = ["mean_wait", "max_wait", "utilization"]  # the headline metric first
    assert [i["alt"] for i in seen["images"]] == [f"{m}: mean and interval" for m in metrics]
    for shown, metric in zip(seen["images"], metrics):
        size = png_size(results / "figures" / f"{metric}.png")
        assert shown["complete"] and (shown["width"], shown["height"]) == size
        assert size[0] > 600 and size[1] > 300

    design, *summaries, failed, cost, provenance = seen["tables"]
    # what the tasks cost: a row per cell, every finished task counted once
    assert cost[0] == ["cell", "tasks", "mean wall time", "longest", "peak memory"]
    assert len(cost) == 1 + len(LEVELS)
    finished = int((dataset["status"] != 0).sum())
    assert sum(int(row[1]) for row in cost[1:]) == finished
    assert design == [
        ["factor", "levels", "count", "paired (shared seeds)"],
        ["arrival_rate", "0.05, 0.3, 0.9", "3", "no"],
        ["service_rate", "fast, slow", "2", "yes"],
    ]
    assert len(summaries) == 3
    for table, metric in zip(summaries, metrics):
        unit = dataset[metric].attrs["units"]
        assert table[0] == [
            "arrival_rate",
            "service_rate",
            metric if unit == "1" else f"{metric} [{unit}]",
            "n",
        ]
        assert table[1:] == expected_rows(dataset, metric)

    assert failures.sizes["failure"] == 4  # this seed's failures, all at the lowest rate
    assert failed[0] == ["levels", "replicate", "error", "task key"]
    cells = [
        f"arrival_rate={rate}, service_rate={level}"
        for rate, level in zip(failures["arrival_rate"].values, failures["service_rate"].values)
    ]
    expected = sorted(
        [c, str(int(r)), str(e), str(k)]
        for c, r, e, k in zip(
            cells,
            failures["failure_replicate"].values,
            failures["failure_error"].values,
            failures["failure_key"].values,
        )
    )
    assert sorted(failed[1:]) == expected
    assert all(
        re.fullmatch(r"RuntimeError: first interarrival \S+ exceeds fail_above=40.0", r[2])
        for r in failed[1:]
    )

    facts = dict(provenance)
    versions = json.loads(dataset.attrs["versions"])
    assert facts["base seed"] == "8" and facts["paired factors (shared seeds)"] == "service_rate"
    assert facts["spec digest"] == dataset.attrs["spec_digest"]
    assert facts["model code digest"] == dataset.attrs["model_code_digest"]
    assert dataset.attrs["model_code_digest"].startswith("blake2b-256:")
    assert facts["version of numpy"] == versions["numpy"] == np.__version__
    assert seen["blocks"][-1] == dataset.attrs["spec"].strip()  # the spec, whole

    # the analysis says what the commands say: effects, the ranking of the paired factor and
    # each of its levels against the first one, for the headline metric
    effects, ranking, comparison = seen["blocks"][:3]
    assert effects == render_effects(campaign.effects(dataset, "mean_wait")).rstrip("\n")
    assert effects.splitlines()[1].startswith("left out: ")  # the failed tasks' values
    assert effects.splitlines()[5].split()[:2] == ["1", "arrival_rate"]
    assert ranking.startswith("degradation from the best service_rate (%), mean over mean_wait")
    assert comparison == render_comparison(
        campaign.compare(dataset, "service_rate", "fast", "mean_wait")
    ).rstrip("\n")


def test_a_screenshot_shows_the_figures(report, tmp_path):
    shot = tmp_path / "page.png"
    browse(report, tmp_path, f"--screenshot={shot}", "--window-size=1200,1600")
    pixels = (image.imread(shot)[:, :, :3] * 255).round()
    # the series colours of the figures (tab10 blue and orange); nothing else on the page
    # has them, so they are there only if the embedded figures were decoded and drawn
    for colour in ([31, 119, 180], [255, 127, 14]):
        assert (np.abs(pixels - colour).max(axis=2) <= 2).sum() > 500, colour


def test_a_baseline_that_is_not_a_level_is_one_line_before_anything_is_written(
    paper_results, tmp_path, capsys
):
    out = tmp_path / "report"
    for baseline, message in [
        ("service_rate=medium", "'medium' is not a level of service_rate; levels: fast, slow"),
        ("speed=fast", "write FACTOR=LEVEL with a factor of arrival_rate, service_rate"),
    ]:
        argv = ["report", str(paper_results), "--out", str(out), "--baseline", baseline]
        assert main(argv) == 2
        assert capsys.readouterr().err == f"campaign: error: --baseline {baseline!r}: {message}\n"
    assert not out.exists()
    assert (
        main(["report", str(paper_results), "--out", str(out), "--baseline", "arrival_rate=0.3"])
        == 0
    )
    page = (out / "report.html").read_text()
    assert "<h3>mean_wait: each arrival_rate against 0.3</h3>" in page
    assert "<h3>Ranking of arrival_rate</h3>" in page


def test_the_demos_report_in_the_browser(tmp_path, scheduler_address):
    """The README's demo spec, made small (400 jobs, 4 replicates): its page shows the three
    schedulers' series in the first figure, and names the scheduler as what matters most."""
    spec = yaml.safe_load((REPO / "specs" / "demo.yaml").read_text())
    spec["params"]["jobs"] = 400
    spec.update(replicates=4, output="out")
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    campaign.run(tmp_path / "demo.yaml", scheduler=scheduler_address, progress=False)
    assert main(["report", str(tmp_path / "out")]) == 0
    page = tmp_path / "out" / "report.html"
    text = page.read_text()
    assert "<h3>Which factors matter: mean_wait</h3>" in text
    effects = html.unescape(text.split("<h3>Which factors matter: mean_wait</h3>\n<pre>")[1])
    assert effects.splitlines()[4].split()[:2] == ["1", "scheduler"]
    assert "<h3>mean_wait: each scheduler against fcfs</h3>" in text
    shot = tmp_path / "demo.png"
    browse(page, tmp_path, f"--screenshot={shot}", "--window-size=1200,1300")
    pixels = (image.imread(shot)[:, :, :3] * 255).round()
    # the first figure (mean_wait) is in view: fcfs, easy and conservative in tab10's first
    # three colours
    for colour in ([31, 119, 180], [255, 127, 14], [44, 160, 44]):
        assert (np.abs(pixels - colour).max(axis=2) <= 2).sum() > 300, colour


def test_a_report_made_without_the_failures_still_counts_them(paper_results, tmp_path):
    from campaign.render.report import write_report

    page = write_report(campaign.open_results(paper_results), tmp_path / "r").read_text()
    assert (
        '<h2 id="failures">Failed tasks</h2><p>4 tasks failed; their error texts are in the '
        "group failures of results.nc (campaign.open_failures).</p>"
    ) in page


def test_the_design_counts_the_tasks_that_ran_as_the_overview_does(run_campaign, tmp_path):
    """With a precision target, status has room for the most replicates any cell got; the
    design line counts the tasks the campaign had, as the overview does, then the most the
    target allows."""
    from campaign.render.report import write_report
    from tests.conftest import MM1_PRECISION

    results = campaign.open_results(run_campaign("precision-report", MM1_PRECISION))
    ran = int(results["precision_replicates"].sum())
    assert int(results.attrs["tasks"]) == ran < results["status"].size
    page = write_report(results, tmp_path / "r").read_text()
    assert f": {ran} of {ran} tasks ok, 0 failed, 0 missing;" in page
    assert (
        "<p>5 cells; replicates per cell: precision target (see precision_replicates in "
        f"results.nc); {ran} tasks (at most 60: 12 replicates per cell).</p>"
    ) in page
