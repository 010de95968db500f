"""The array evaluation of SeedSequence equals NumPy's own, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.design.seeds import SEED_MASK, int_words, level_words_matrix, spawned_seeds


@pytest.mark.parametrize("base", [0, 1, 20260101, 2**32 + 3, 2**64 - 1, 2**130 + 11])
@pytest.mark.parametrize("levels", [0, 1, 3])
def test_spawned_seeds_equal_numpy_seedsequence(base, levels):
    rng = np.random.default_rng(levels)
    replicates = rng.integers(0, 2**32, 64, dtype=np.uint64)
    words = rng.integers(0, 2**63, (64, levels), dtype=np.uint64) | np.uint64(1 << 63)
    columns = [replicates.astype(np.uint32)[:, None]]
    if levels:
        columns.append(level_words_matrix(words))
    got = spawned_seeds(base, np.concatenate(columns, axis=1))
    for seed, replicate, row in zip(got, replicates, words):
        sequence = np.random.SeedSequence(base, spawn_key=(int(replicate), *map(int, row)))
        assert int(seed) == int(sequence.generate_state(1, np.uint64)[0]) & SEED_MASK


def test_int_words_match_numpy_coercion():
    from numpy.random.bit_generator import _coerce_to_uint32_array

    for value in (0, 1, 2**32 - 1, 2**32, 2**96 + 5):
        assert int_words(value) == _coerce_to_uint32_array(value).tolist()
