"""Compare the results of two campaign output folders (or two results.nc files) value for value.

Used to show that a change of code leaves a campaign's numbers bit-identical: every data
variable and coordinate of the first file must equal the second's exactly (NaN equals NaN);
provenance attributes (creation time, versions, digests) are not compared.

    python scripts/compare_results.py OUT_A OUT_B [OUT_C OUT_D ...]

The failed tasks (the ``failures`` group, or the ``failure_*`` variables of older files)
are compared too; against an older file, on the columns it has (it names a failure's cell, not
its factor levels). Pairs are compared in order (A with B, C with D, ...). Exit status 0 when
every pair is identical, 1 otherwise, with one line per difference.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import xarray as xr


def results_file(path: str) -> Path:
    path = Path(path)
    return path / "results.nc" if path.is_dir() else path


def identical(a: xr.DataArray, b: xr.DataArray) -> bool:
    """Exact equality of values, dimensions and coordinates; NaN equals NaN."""
    if a.dims != b.dims or a.shape != b.shape:
        return False
    left, right = np.asarray(a.values), np.asarray(b.values)
    if left.dtype.kind in "fc" and right.dtype.kind in "fc":
        return bool(np.array_equal(left, right, equal_nan=True))
    return bool(np.array_equal(left, right))


def differences(path_a: Path, path_b: Path) -> list[str]:
    """One line per variable or coordinate that differs between the two files."""
    from campaign.results.netcdf import LEGACY_FAILURE_VARIABLES, open_failures, open_results

    lines = dataset_differences(open_results(path_a), open_results(path_b), path_a, path_b)
    fail_a, fail_b = open_failures(path_a), open_failures(path_b)
    if set(fail_a.data_vars) <= set(LEGACY_FAILURE_VARIABLES) or set(fail_b.data_vars) <= set(
        LEGACY_FAILURE_VARIABLES
    ):
        # An older file names a failure's cell but not its factor levels: compare what both say.
        fail_a, fail_b = (
            fail_a[list(LEGACY_FAILURE_VARIABLES)],
            fail_b[list(LEGACY_FAILURE_VARIABLES)],
        )
    failures = dataset_differences(fail_a, fail_b, path_a, path_b)
    return lines + [f"failures: {line}" for line in failures]


def dataset_differences(a: xr.Dataset, b: xr.Dataset, path_a: Path, path_b: Path) -> list[str]:
    lines = []
    for kind, names_a, names_b in (
        ("coordinate", set(a.coords), set(b.coords)),
        ("variable", set(a.data_vars), set(b.data_vars)),
    ):
        for name in sorted(names_a ^ names_b):
            where = path_a if name in names_a else path_b
            lines.append(f"{kind} {name} only in {where}")
        for name in sorted(names_a & names_b):
            if not identical(a[name], b[name]):
                detail = ""
                if a[name].shape == b[name].shape and a[name].dtype.kind in "fi":
                    delta = np.abs(a[name].values.astype(float) - b[name].values.astype(float))
                    detail = f" (max |difference| {np.nanmax(delta, initial=0.0):.3g})"
                lines.append(f"{kind} {name} differs{detail}")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__.strip().splitlines()[-4].strip(), file=sys.stderr)
        print("usage: compare_results.py OUT_A OUT_B [OUT_C OUT_D ...]", file=sys.stderr)
        return 2
    status = 0
    for first, second in zip(argv[0::2], argv[1::2]):
        path_a, path_b = results_file(first), results_file(second)
        lines = differences(path_a, path_b)
        if lines:
            status = 1
            print(f"DIFFERENT {path_a} vs {path_b}")
            for line in lines:
                print(f"  {line}")
        else:
            print(f"identical {path_a} == {path_b}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
