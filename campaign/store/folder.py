"""Where figures, tables and reports go: paths checked before any work, folders made."""

from __future__ import annotations

from pathlib import Path

from campaign.errors import CampaignError


def check_folder(folder: Path, what: str) -> None:
    """Refuse a folder path that a file blocks: the path itself or one of its parents."""
    for place in (folder, *folder.parents):
        if place.exists():
            if not place.is_dir():
                raise CampaignError(f"{what}: {place} is a file, not a folder")
            return


def make_folder(folder: Path, what: str) -> None:
    """Make ``folder`` (and its parents) or say in one line why it cannot be."""
    check_folder(folder, what)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CampaignError(f"{what}: cannot make the folder {folder}: {error.strerror}") from None


def image_path(out: str | Path) -> Path:
    """Where ``plot --out`` writes: a file of an image format matplotlib writes (``.png`` added
    to a name without a suffix) whose folder exists or can be made: checked before anything
    is read (the folder is made when the image is written)."""
    from matplotlib.backend_bases import FigureCanvasBase

    path = Path(out).expanduser()
    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    if path.is_dir():
        raise CampaignError(
            f"--out {out} is a folder; give an image file such as {path / 'plot.png'}"
        )
    if not path.suffix:
        path = path.with_name(f"{path.name}.png")
    if path.suffix[1:].lower() not in formats:
        raise CampaignError(
            f"--out {out}: {path.suffix!r} is not an image format matplotlib writes; use "
            f"{', '.join('.' + f for f in formats)}"
        )
    check_folder(path.parent, f"--out {out}")
    return path


def write_text(path: Path, text: str) -> Path:
    """Write a text file whole, or say in one line why it cannot be."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise CampaignError(f"cannot write {path}: {error.strerror}") from None
    return path
