"""Task keys to task indices by the million, with no Python string per task: every key of the
design found at its index, paired levels (shared seeds) told apart, any other key not."""

from __future__ import annotations

import numpy as np

from campaign.design.lookup import NOT_IN_DESIGN, key_numbers
from campaign.design.tasks import Design
from campaign.spec.load import spec_from_text

SPEC = """
name: keys
model: busy
factors:
  tag: [a, b, c]
  other: [x, y]
paired: [other]
replicates: 4
seed: 5
"""


def test_every_key_of_the_design_is_found_at_its_index_and_no_other_key():
    design = Design(spec_from_text(SPEC, None))
    keys = design.keys()
    assert len(set(design.seeds.ravel().tolist())) < design.size  # paired levels share seeds
    assert design.lookup.indices(keys[::-1]).tolist() == list(range(design.size))[::-1]
    others = [
        keys[3].upper(),  # hex digits are lowercase in keys
        keys[3][:-1],
        keys[3] + "0",
        keys[3][16:] + keys[3][:16],
        "é" * 32,
        "",
        keys[0][:16] + keys[8][16:],  # a cell's digest with the seed of another tag
    ]
    found = design.lookup.indices([*others, keys[5]]).tolist()
    assert found == [NOT_IN_DESIGN] * len(others) + [5]


def test_key_numbers_are_the_digest_and_seed_of_a_key():
    cells, seeds, usual = key_numbers(["00000000000000ff0000000000000010", "zz"])
    assert cells.tolist() == [255, 0] and seeds.tolist() == [16, 0]
    assert usual.tolist() == [True, False]
    assert key_numbers([])[0].dtype == np.uint64
