"""Files made from a results.nc: the report page, figures, the exported table.

They say nothing of the results they were made from, so once results.nc is written again
with other numbers they would pass for the campaign's current results: whatever rewrites
results.nc removes them then (`campaign.results.writing`), and ``--new`` sets them aside with the
rest of the earlier campaign. Only the files the commands write by default are touched: in
``figures/`` only images (a file of another kind a user put there stays).
"""

from __future__ import annotations

from pathlib import Path

from campaign.store.folder import FIGURES_FOLDER, REPORT_FILE, RESULTS_FILE

EXPORTED = tuple(
    f"{Path(RESULTS_FILE).stem}{suffix}" for suffix in (".csv", ".units.csv", ".parquet")
)
"""`campaign export`'s default files, beside results.nc."""
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")  # what `plot` and `report` write into figures/
DERIVED_NAMES = (REPORT_FILE, FIGURES_FOLDER, *EXPORTED)  # what ``--new`` sets aside


def derived_files(output: Path) -> list[Path]:
    """The files made from a results.nc that lie in the output folder ``output``."""
    found = [output / name for name in (REPORT_FILE, *EXPORTED) if (output / name).is_file()]
    figures = output / FIGURES_FOLDER
    if figures.is_dir():
        found += sorted(
            path for path in figures.iterdir() if path.is_file() and path.suffix in FIGURE_SUFFIXES
        )
    return found


def remove_derived(output: Path, paths: list[Path]) -> list[str]:
    """Remove ``paths`` (from `derived_files`), and figures/ when that leaves it empty; the
    names removed, as a line shows them (figures/ once)."""
    for path in paths:
        path.unlink(missing_ok=True)
    figures = output / FIGURES_FOLDER
    if figures.is_dir() and not any(figures.iterdir()):
        figures.rmdir()
    names = []
    for path in paths:
        name = f"{FIGURES_FOLDER}/" if path.parent == figures else path.name
        if name not in names:
            names.append(name)
    return names
