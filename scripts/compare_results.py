"""Compare the results of two campaign output folders (or two results.nc files) value for value.

Used to show that a change of code leaves a campaign's numbers bit-identical: every data
variable and coordinate of the first file must equal the second's exactly (NaN equals NaN);
provenance attributes (creation time, versions, digests) are not compared.

    python scripts/compare_results.py [--common] OUT_A OUT_B [OUT_C OUT_D ...]

With ``--common``, only the variables and coordinates both files have are compared, and those
only one file has are listed as skipped: the way to compare results of code that added metrics
(a sample's quantiles, a breakdown) with those of the code before.

The failed tasks (the ``failures`` group, or the ``failure_*`` variables of older files) are
compared too; against an older file, on the columns it has (it names a failure's cell, not its
factor levels). So are the samples' quantiles and the breakdowns, wherever the file keeps them
(their groups, or the root of a file written before they had groups): a file of either layout
compares with one of the other value for value. Pairs are compared in order (A with B, C with
D, ...). Exit status 0 when every pair is identical, 1 otherwise, with one line per difference.
"""

from __future__ import annotations

import argparse
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


def differences(path_a: Path, path_b: Path, common: bool = False) -> list[str]:
    """One line per variable or coordinate that differs between the two files; with common,
    those only one file has are left out (skipped lists them)."""
    lines = []
    for group, a, b in datasets(path_a, path_b):
        found = [] if common else one_sided_lines(a, b, path_a, path_b)
        found += value_differences(a, b)
        lines += [f"{group}{line}" for line in found]
    return lines


def skipped(path_a: Path, path_b: Path) -> list[str]:
    """The variables and coordinates only one file has: one line per file and kind."""
    lines = []
    for group, a, b in datasets(path_a, path_b):
        for (kind, where), names in one_sided(a, b, path_a, path_b).items():
            plural = "coordinates" if kind == "coordinate" else "variables"
            lines.append(f"{group}{plural} only in {where}: {', '.join(names)}")
    return lines


def datasets(path_a: Path, path_b: Path) -> list[tuple[str, xr.Dataset, xr.Dataset]]:
    """The results, the failures, the samples and each breakdown of both files, each with the
    prefix its lines take."""
    from campaign.results.netcdf import (
        LEGACY_FAILURE_VARIABLES,
        open_breakdown,
        open_failures,
        open_results,
        open_samples,
        stored_breakdowns,
    )

    fail_a, fail_b = open_failures(path_a), open_failures(path_b)
    if set(fail_a.data_vars) <= set(LEGACY_FAILURE_VARIABLES) or set(fail_b.data_vars) <= set(
        LEGACY_FAILURE_VARIABLES
    ):
        # An older file names a failure's cell but not its factor levels: compare what both say.
        fail_a, fail_b = (
            fail_a[list(LEGACY_FAILURE_VARIABLES)],
            fail_b[list(LEGACY_FAILURE_VARIABLES)],
        )
    found = [
        ("", open_results(path_a), open_results(path_b)),
        ("failures: ", fail_a, fail_b),
        ("samples: ", open_samples(path_a), open_samples(path_b)),
    ]
    dims_a, dims_b = stored_breakdowns(path_a), stored_breakdowns(path_b)
    for dimension in sorted(set(dims_a) | set(dims_b)):
        found.append(
            (
                f"breakdown {dimension}: ",
                open_breakdown(path_a, dimension) if dimension in dims_a else xr.Dataset(),
                open_breakdown(path_b, dimension) if dimension in dims_b else xr.Dataset(),
            )
        )
    return found


def kinds(a: xr.Dataset, b: xr.Dataset):
    return (
        ("coordinate", set(a.coords), set(b.coords)),
        ("variable", set(a.data_vars), set(b.data_vars)),
    )


def one_sided(
    a: xr.Dataset, b: xr.Dataset, path_a: Path, path_b: Path
) -> dict[tuple[str, Path], list[str]]:
    """The names only one dataset has, by kind and by the file that has them."""
    found: dict[tuple[str, Path], list[str]] = {}
    for kind, names_a, names_b in kinds(a, b):
        for name in sorted(names_a ^ names_b):
            where = path_a if name in names_a else path_b
            found.setdefault((kind, where), []).append(name)
    return found


def one_sided_lines(a: xr.Dataset, b: xr.Dataset, path_a: Path, path_b: Path) -> list[str]:
    return [
        f"{kind} {name} only in {where}"
        for (kind, where), names in one_sided(a, b, path_a, path_b).items()
        for name in names
    ]


def value_differences(a: xr.Dataset, b: xr.Dataset) -> list[str]:
    """One line per variable or coordinate both datasets have whose values differ."""
    lines = []
    for kind, names_a, names_b in kinds(a, b):
        for name in sorted(names_a & names_b):
            if not identical(a[name], b[name]):
                detail = ""
                if a[name].dims != b[name].dims:
                    detail = f" (dimensions {a[name].dims} vs {b[name].dims})"
                elif a[name].shape == b[name].shape and a[name].dtype.kind in "fi":
                    delta = np.abs(a[name].values.astype(float) - b[name].values.astype(float))
                    detail = f" (max |difference| {np.nanmax(delta, initial=0.0):.3g})"
                lines.append(f"{kind} {name} differs{detail}")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--common",
        action="store_true",
        help="compare only the variables and coordinates both files have; list the others",
    )
    parser.add_argument("outputs", nargs="+", metavar="OUT", help="output folders or .nc files")
    args = parser.parse_args(argv)
    if len(args.outputs) % 2:
        parser.error(f"outputs come in pairs (OUT_A OUT_B ...); {len(args.outputs)} given")
    status = 0
    for first, second in zip(args.outputs[0::2], args.outputs[1::2]):
        path_a, path_b = results_file(first), results_file(second)
        lines = differences(path_a, path_b, common=args.common)
        where = " (the variables and coordinates both have)" if args.common else ""
        if lines:
            status = 1
            print(f"DIFFERENT {path_a} vs {path_b}{where}")
            for line in lines:
                print(f"  {line}")
        else:
            print(f"identical {path_a} == {path_b}{where}")
        if args.common:
            for line in skipped(path_a, path_b):
                print(f"  skipped: {line}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
