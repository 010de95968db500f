"""Figures of a study like a simulator's: workers 2, 4, 8 (integers), flops 1e7 and 1e8 (a
float factor whose levels differ tenfold) and two strategies, from a real program. Ticks sit
at the levels and read as plain numbers; the factor a figure would average over, when its
levels span a factor of 10, is shown in panels instead; the report draws the same."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import matplotlib.pyplot as plt
import numpy as np
import pytest

import campaign
from campaign.render.figures import plot
from campaign.render.numbers import level

PROGRAM = """
import json, sys
workers, flops, strategy, seed = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
makespan = flops / 1e6 / workers * (1.0 if strategy == "rr" else 0.8) * (1 + (seed % 7) / 100)
print(json.dumps({"makespan": makespan, "energy": 200 * makespan}))
"""
SPEC = """
name: simulator
model:
  command: [python3, sim.py, "{workers}", "{flops}", "{strategy}", "{seed}"]
  inputs: [sim.py]
factors:
  workers: [2, 4, 8]
  flops: [1.0e+7, 1.0e+8]
  strategy: [rr, greedy]
paired: [strategy]
replicates: 2
seed: 5
output: out
"""
PLAIN = re.compile(r"^\d+(\.\d+)?(e[+-]\d+)?$")


@pytest.fixture(scope="module")
def results(tmp_path_factory, scheduler_address):
    folder = tmp_path_factory.mktemp("simulator")
    (folder / "sim.py").write_text(PROGRAM)
    (folder / "spec.yaml").write_text(SPEC)
    campaign.run(folder / "spec.yaml", scheduler=scheduler_address, progress=False)
    return folder / "out"


def tick_labels(axis) -> list[str]:
    """The labels of the ticks within the axis's view, as drawn."""
    low, high = sorted(axis.get_view_interval())
    ticks = zip(axis.get_majorticklocs(), axis.get_majorticklabels())
    return [label.get_text() for at, label in ticks if low <= at <= high]


def test_levels_general_format():
    assert [level(v) for v in (1e8, 1e7, 100000.0, 2.0, 2.5, 0.05, 123456789.0)] == [
        "1e+08", "1e+07", "100000", "2", "2.5", "0.05", "123456789"
    ]  # fmt: skip
    assert [level(np.int64(8)), level("rr"), level(True)] == ["8", "rr", "True"]


def test_float_levels_read_in_general_format(results):
    dataset = campaign.open_results(results)
    figure = plot(dataset, "makespan", x="workers", by="flops", facet="strategy")
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["1e+07", "1e+08"]
    plt.close(figure)
    figure = plot(dataset, "makespan", x="workers", by="strategy", facet="flops")
    assert [axes.get_title() for axes in figure.axes] == ["flops = 1e+07", "flops = 1e+08"]
    plt.close(figure)
    figure = plot(dataset, "makespan", kind="box", x="flops", by="strategy", facet="workers")
    figure.canvas.draw()
    assert tick_labels(figure.axes[0].xaxis) == ["1e+07", "1e+08"]
    plt.close(figure)


def test_a_numeric_factor_of_few_levels_is_ticked_at_its_levels(results):
    dataset = campaign.open_results(results)
    figure = plot(dataset, "makespan", x="workers", by="strategy", facet="flops", size="column")
    figure.canvas.draw()
    for axes in figure.axes:
        assert list(axes.get_xticks()) == [2, 4, 8]
        assert tick_labels(axes.xaxis) == ["2", "4", "8"]
    plt.close(figure)
    figure = plot(dataset, "makespan", x="flops", by="workers", facet="strategy")
    figure.canvas.draw()
    for axes in figure.axes:
        assert axes.get_xscale() == "log"
        assert list(axes.get_xticks()) == [1e7, 1e8]
        assert tick_labels(axes.xaxis) == ["1e+07", "1e+08"]
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["2", "4", "8"]
    plt.close(figure)


def test_log_axes_read_as_plain_numbers(results):
    dataset = campaign.open_results(results)
    # the means span 1.1 to 51: a log axis ticked at 1, 2, 5 in each decade
    figure = plot(dataset, "makespan", x="workers", by="strategy", facet="flops")
    figure.canvas.draw()
    assert figure.axes[0].get_yscale() == "log"
    assert tick_labels(figure.axes[0].yaxis) == ["1", "2", "5", "10", "20", "50"]
    plt.close(figure)
    # less than a decade (energy about 2,000 to 10,000 at flops 1e8), log asked: plain numbers
    figure = plot(dataset, "energy", x="workers", by="strategy", where={"flops": 1e8}, log="y")
    figure.canvas.draw()
    (axes,) = figure.axes
    assert tick_labels(axes.yaxis) == ["2000", "5000", "10000"]
    assert [t.get_text() for t in axes.yaxis.get_minorticklabels() if t.get_text()] == []
    plt.close(figure)
    # a violin's log10 densities: ticks at the powers of ten, in plain numbers
    figure = plot(dataset, "makespan", kind="violin", x="workers", by="strategy", facet="flops")
    figure.canvas.draw()
    assert tick_labels(figure.axes[0].yaxis) == ["1", "10"]
    plt.close(figure)


def title(figure) -> str:
    """The figure's title, unwrapped."""
    return " ".join(figure.get_suptitle().split())


def panel_means(axes) -> dict[str, list[float]]:
    """Per series drawn (its legend label), the means of its line."""
    return {line.get_label(): list(line.get_ydata()) for line in axes.lines}


def test_a_factor_ten_times_apart_is_shown_in_panels_not_averaged(results, tmp_path):
    dataset = campaign.open_results(results)
    figure = plot(dataset, "makespan")
    assert title(figure) == (
        "Mean and 95% interval over 2 replicates; a panel per flops (levels 1e+07 to 1e+08: "
        "too far apart to average)"
    )
    table = campaign.query(dataset, "makespan")
    for axes, flops in zip(figure.axes, [1e7, 1e8]):
        assert axes.get_title() == f"flops = {level(flops)}"
        expected = {
            strategy: list(
                table[(table.flops == flops) & (table.strategy == strategy)].makespan_mean
            )
            for strategy in ("rr", "greedy")
        }
        assert panel_means(axes) == expected
    plt.close(figure)
    # asked for no panels: the mean over flops, labelled with the range it averages
    figure = plot(dataset, "makespan", facet=False)
    assert title(figure) == (
        "Mean and 95% interval over 2 replicates; mean over flops (levels 1e+07 to 1e+08)"
    )
    assert len(figure.axes) == 1
    plt.close(figure)
    # the report's figure is the default one: a panel per level of flops
    campaign.report(results, out=tmp_path / "report")
    svg = ET.parse(tmp_path / "report" / "figures" / "makespan.svg").getroot()
    texts = [t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert "flops = 1e+07" in texts and "flops = 1e+08" in texts
