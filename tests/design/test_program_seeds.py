"""Seeds handed to programs: ``{seed}`` fits a signed 64-bit integer, and ``{seed31}`` a
32-bit one (C's atoi, Java's Integer.parseInt) for every task, drawn from the task's own seed
stream so that paired levels share it."""

from __future__ import annotations

import subprocess

import numpy as np

import campaign
from campaign.design.seeds import seed31

C_READER = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int narrow = atoi(argv[1]);              /* what a program written for 32 bits does */
    long long wide = strtoll(argv[2], 0, 10);
    printf("narrow=%d\nwide_ok=%d\n", narrow, wide >= 0);
    return 0;
}
"""


def test_seed31_is_the_first_word_of_the_tasks_stream_shifted_by_one_bit():
    for seed in (0, 1, 2**31, 2**63 - 1, 6_148_914_691_236_517_205):
        word = np.random.SeedSequence(seed).generate_state(1, np.uint32)[0]
        assert seed31(seed) == int(word) >> 1
        assert 0 <= seed31(seed) < 2**31
    assert seed31(20260101) == 1_355_436_847  # fixed for good: stored campaigns depend on it


def test_a_32_bit_parser_reads_seed31_of_every_task_and_pairs_share_it(
    tmp_path, write_spec, scheduler_address
):
    (tmp_path / "reader.c").write_text(C_READER)
    subprocess.run(["cc", "-o", str(tmp_path / "reader"), str(tmp_path / "reader.c")], check=True)
    spec = write_spec(
        """
        name: seeds
        model:
          command: [./reader, "{seed31}", "{seed}", "{policy}", "{load}"]
        factors:
          policy: [a, b]
          load: [1, 2]
        paired: [policy]
        replicates: 8
        seed: 20260101
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    seeds = data.seed.values.astype(np.uint64)
    assert (seeds < np.uint64(2**63)).all() and data.wide_ok.values.min() == 1
    expected = np.vectorize(lambda s: seed31(int(s)), otypes=[float])(seeds)
    assert np.array_equal(data.narrow.values, expected)
    assert (data.narrow.sel(policy="a") == data.narrow.sel(policy="b")).all()  # paired
    assert len(np.unique(data.narrow.sel(policy="a").values)) == 16  # 2 loads x 8 replicates
