"""Results written again from stored ones (`merge`, `remetric`, a run adding replicates) keep
the confidence level the stored results were made with, unless told another: recomputing or
joining changes no interval's level. A campaign with a precision target is written at the
target's level, the one its stopping rule checked."""

from __future__ import annotations

import textwrap

import numpy as np
from scipy import stats

import campaign
from campaign.results.writing import kept_confidence
from tests.conftest import MM1_PRECISION, MM1_TWO_LOADS


def half_widths(results, metric):
    return (results[f"{metric}_ci_high"] - results[f"{metric}_ci_low"]).values / 2


def t_half_widths(values, confidence):
    """Student-t half-widths over the last axis, computed here."""
    n = values.shape[-1]
    spread = values.std(axis=-1, ddof=1) / np.sqrt(n)
    return stats.t.ppf(0.5 + confidence / 2, n - 1) * spread


def run_shards(spec, scheduler_address):
    for shard in ("1/2", "2/2"):
        campaign.run(spec, scheduler=scheduler_address, progress=False, shard=shard)


def test_a_merge_into_results_at_90_percent_stays_at_90_percent(tmp_path, scheduler_address):
    spec = tmp_path / "spec.yaml"
    spec.write_text(MM1_TWO_LOADS)  # 2 arrival rates, 4 replicates
    run_shards(spec, scheduler_address)
    merged = campaign.merge([tmp_path / "out"], tmp_path / "merged", confidence=0.9)
    assert merged.dataset.attrs["confidence"] == 0.9  # as told
    # the campaign grows by 2 replicates, run in shards again and merged into the same folder
    spec.write_text(MM1_TWO_LOADS.replace("replicates: 4", "replicates: 6"))
    run_shards(spec, scheduler_address)
    grown = campaign.merge([tmp_path / "out"], tmp_path / "merged")
    assert grown.dataset.attrs["confidence"] == 0.9  # the merged results' own, not 0.95
    waits = grown.dataset["mean_wait"].values
    assert waits.shape == (2, 6)
    assert np.allclose(half_widths(grown.dataset, "mean_wait"), t_half_widths(waits, 0.9))
    assert not [note for note in grown.notes if "confidence" in note]


def test_more_replicates_keep_the_level_the_results_were_run_at(tmp_path, scheduler_address):
    spec = tmp_path / "spec.yaml"
    spec.write_text(MM1_TWO_LOADS)  # 2 arrival rates, 4 replicates
    campaign.run(spec, scheduler=scheduler_address, progress=False, confidence=0.9)
    spec.write_text(MM1_TWO_LOADS.replace("replicates: 4", "replicates: 6"))
    grown = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert grown.attrs["confidence"] == 0.9  # not 0.95 over results chosen at 0.9
    waits = grown["mean_wait"].values
    assert waits.shape == (2, 6)
    assert np.allclose(half_widths(grown, "mean_wait"), t_half_widths(waits, 0.9))
    afresh = campaign.run(spec, scheduler=scheduler_address, progress=False, new=True)
    assert afresh.attrs["confidence"] == 0.95  # the results set aside choose nothing


def test_a_precision_campaign_is_written_at_its_target_level(tmp_path, scheduler_address):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        MM1_PRECISION.replace("max_replicates: 12", "max_replicates: 12, confidence: 0.9")
    )
    results = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert results.attrs["confidence"] == 0.9
    waits = results["mean_wait"].values
    counts = (~np.isnan(waits)).sum(axis=-1)
    widths = half_widths(results, "mean_wait")
    for cell, n in enumerate(counts):
        assert np.isclose(widths[cell], t_half_widths(waits[cell, :n], 0.9))
    met = results["precision_met"].values == 1
    assert met.any()  # a met cell's interval is within the target it was checked against
    assert (widths[met] <= 0.25 * np.abs(np.nanmean(waits, axis=-1))[met] + 1e-12).all()


def test_a_precision_campaign_in_shards_merges_at_its_target_level(tmp_path, scheduler_address):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        MM1_PRECISION.replace("max_replicates: 12", "max_replicates: 12, confidence: 0.9")
    )
    single = campaign.run(
        spec, scheduler=scheduler_address, progress=False, output=tmp_path / "single"
    )
    run_shards(spec, scheduler_address)
    merged = campaign.merge([tmp_path / "out"], tmp_path / "merged").dataset
    assert merged.attrs["confidence"] == single.attrs["confidence"] == 0.9  # the rule's level
    for name in ("mean_wait_ci_low", "mean_wait_ci_high", "precision_met"):
        np.testing.assert_array_equal(merged[name].values, single[name].values)


def test_results_at_two_levels_are_written_at_95_percent_saying_so(tmp_path, scheduler_address):
    files = []
    for level in (0.9, 0.99):
        spec = tmp_path / f"spec-{level}.yaml"
        spec.write_text(MM1_TWO_LOADS.replace("output: out", f"output: out-{level}"))
        campaign.run(spec, scheduler=scheduler_address, progress=False, confidence=level)
        files.append(tmp_path / f"out-{level}" / "results.nc")
    said = []
    assert kept_confidence(files, said.append) == 0.95
    assert said == ["results made at confidence 0.9, 0.99: written at 0.95 (--confidence chooses)"]
    assert kept_confidence([files[0], tmp_path / "none.nc"], said.append) == 0.9
    assert kept_confidence([tmp_path / "none.nc"], said.append) == 0.95
    assert len(said) == 1


SIM = """
import json, sys
print(json.dumps({"y": float(sys.argv[1]) + int(sys.argv[2]) % 7}))
"""

SPEC = """
name: noisy
model:
  command: [python3, sim.py, "{x}", "{seed}"]
  inputs: [sim.py]
  keep: [stdout]
factors:
  x: [1, 2]
replicates: 4
seed: 4
output: out
"""

TENFOLD = """
import json
from pathlib import Path


def y10(folder):
    return {"y": 10 * json.loads(Path(folder, "stdout").read_text())["y"]}
"""


def test_a_remetric_of_results_at_90_percent_is_at_90_percent(
    tmp_path, monkeypatch, scheduler_address
):
    (tmp_path / "sim.py").write_text(textwrap.dedent(SIM))
    (tmp_path / "tenfold_at_90.py").write_text(textwrap.dedent(TENFOLD))
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    monkeypatch.syspath_prepend(str(tmp_path))
    first = campaign.run(spec, scheduler=scheduler_address, progress=False, confidence=0.9)
    done = campaign.remetric(spec, {"parse": "tenfold_at_90:y10"})
    assert done.dataset.attrs["confidence"] == 0.9
    ys = done.dataset["y"].values
    assert np.array_equal(ys, 10 * first["y"].values)  # recomputed, nothing run
    assert ys.std(axis=1).min() > 0  # intervals of some width
    assert np.allclose(half_widths(done.dataset, "y"), t_half_widths(ys, 0.9))
    assert campaign.open_results(tmp_path / "out").attrs["confidence"] == 0.9


def test_a_campaign_handle_merges_and_remetrics_at_the_results_own_level(
    tmp_path, monkeypatch, scheduler_address
):
    (tmp_path / "sim.py").write_text(textwrap.dedent(SIM))
    (tmp_path / "tenfold_by_handle.py").write_text(textwrap.dedent(TENFOLD))
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    monkeypatch.syspath_prepend(str(tmp_path))
    run_shards(spec, scheduler_address)
    handle = campaign.open(spec)
    assert handle.merge(confidence=0.9).dataset.attrs["confidence"] == 0.9  # as told
    done = handle.remetric({"parse": "tenfold_by_handle:y10"})
    assert done.dataset.attrs["confidence"] == 0.9  # as `campaign.remetric` keeps it
    merged = handle.merge()
    assert merged.dataset.attrs["confidence"] == 0.9  # as `campaign.merge` keeps it
    ys = merged.dataset["y"].values
    assert np.allclose(half_widths(merged.dataset, "y"), t_half_widths(ys, 0.9))
