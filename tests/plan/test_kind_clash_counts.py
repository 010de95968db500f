"""A program edited to print a sample where its stored results hold a number: the stored
numbers clash with the new samples, results.nc counts them as failed, and so do `plan` and
`run`, which runs them again (they counted them as done, and no run computed them again)."""

from __future__ import annotations

import textwrap

import campaign

SPEC = """
name: kinds
model:
  command: [/bin/sh, sim.sh, "{{a}}"]
  inputs: [sim.sh]
factors:
  a: {levels}
replicates: 1
seed: 3
output: out
"""


def test_stored_numbers_clashing_with_new_samples_count_as_failed_and_run_again(
    tmp_path, scheduler_address
):
    spec, script = tmp_path / "spec.yaml", tmp_path / "sim.sh"
    spec.write_text(textwrap.dedent(SPEC.format(levels="[1, 2]")))
    script.write_text("echo x=$1\n")
    campaign.run(spec, scheduler=scheduler_address, progress=False)
    script.write_text("echo '{\"x\": ['$1', 2]}'\n")  # x is now a sample, and a level more
    spec.write_text(textwrap.dedent(SPEC.format(levels="[1, 2, 3]")))
    campaign.run(spec, scheduler=scheduler_address, progress=False, on_change="accept")

    plan = campaign.plan(spec, on_change="accept")  # as results.nc counts them
    assert (plan.done, len(plan.failed), len(plan.missing)) == (1, 2, 0)
    data = campaign.run(spec, scheduler=scheduler_address, progress=False, on_change="accept")
    assert data.status.values.ravel().tolist() == [1, 1, 1]
    assert data["x_count"].values.ravel().tolist() == [2.0, 2.0, 2.0]
