"""Global attributes of a results file, read without opening the whole Dataset: the spec it
keeps, its confidence level or its digest, wanted by commands that do not read its numbers."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def results_attributes(path: Path, names: Iterable[str]) -> dict[str, object]:
    """Those of ``names`` the results file at ``path`` has (raises OSError when it is not a
    readable netCDF file)."""
    import netCDF4

    with netCDF4.Dataset(path) as handle:
        present = handle.ncattrs()
        return {name: handle.getncattr(name) for name in names if name in present}
