"""What an output folder holds, by name, and where figures, tables and reports go: paths
checked before any work, folders made.

Every file of an output folder is named here, and only here::

    OUTPUT/campaign.json        what the stored results mean: model, fixed params, base seed
    OUTPUT/campaign.lock        held (flock) by the one run that may write the folder
    OUTPUT/ledger/*.jsonl       one file per finished batch, one JSON record per task
    OUTPUT/ledger.damaged/      files of the ledger that held damaged records
    OUTPUT/ledger.old-*/        a campaign set aside by ``--new``
    OUTPUT/ledger.changed-*/    records set aside because what they were computed from changed
    OUTPUT/ledger.unkept-*/     records set aside by ``remetric --rerun-unkept``: they kept no
                                outputs to compute their metrics from, so they run again
    OUTPUT/outputs/*.zip        kept outputs of tasks (stdout, stderr, kept files), one archive
                                per stored batch, named by the digest of its bytes
    OUTPUT/results.nc           the results file
    OUTPUT/shard-I-of-N/        a shard's own output folder
    OUTPUT/figures/             figures (``plot``, ``report``)
    OUTPUT/report.html          the report page
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from campaign.errors import CampaignError, ParameterError

if TYPE_CHECKING:
    from campaign.spec.load import Spec

IDENTITY_FILE = "campaign.json"
LOCK_FILE = "campaign.lock"
LEDGER_FOLDER = "ledger"
LEDGER_BATCHES = "*.jsonl"
OUTPUTS_FOLDER = "outputs"
OUTPUT_ARCHIVES = "*.zip"  # inside the outputs folder
COMPACTION_LOCK = ".compaction.lock"  # inside the ledger folder
DAMAGED_FOLDER = f"{LEDGER_FOLDER}.damaged"
RESULTS_FILE = "results.nc"
FIGURES_FOLDER = "figures"
REPORT_FILE = "report.html"
SHARD_FOLDERS = "shard-*-of-*"
WRITTEN_BESIDE_LEDGER = (IDENTITY_FILE, RESULTS_FILE)  # written atomically beside the ledger


def aside_folder_name(kind: str, stamp: str) -> str:
    """The name of a folder of records set aside: ``ledger.old-STAMP``, ``ledger.changed-STAMP``."""
    return f"{LEDGER_FOLDER}.{kind}-{stamp}"


def shard_folder_name(index: int, count: int) -> str:
    """The name of shard ``index`` of ``count``'s output folder: ``shard-I-of-N``."""
    return f"shard-{index}-of-{count}"


def shard_of_folder(name: str) -> str:
    """``I/N`` from a shard folder's name ``shard-I-of-N``."""
    return name.removeprefix("shard-").replace("-of-", "/")


def check_folder(folder: Path, what: str, *parameters: str) -> None:
    """Refuse a folder path that a file blocks: the path itself or one of its parents.
    ``what`` names the folder in the error, a parameter there as ``{name}`` (`ParameterError`)
    when ``parameters`` name it."""
    for place in (folder, *folder.parents):
        if place.exists():
            if not place.is_dir():
                raise ParameterError(f"{what}: {place} is a file, not a folder", *parameters)
            return


def make_folder(folder: Path, what: str, *parameters: str) -> None:
    """Make ``folder`` (and its parents) or say in one line why it cannot be (``what`` and
    ``parameters`` as for `check_folder`)."""
    check_folder(folder, what, *parameters)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ParameterError(
            f"{what}: cannot make the folder {folder}: {error.strerror}", *parameters
        ) from None


def check_output(spec: Spec, given: bool = False) -> None:
    """Refuse, before any work, an output folder a file stands in for (or in the way of), and
    a results.nc that is not a file (``given``: the folder came from ``output``, not the spec):
    what `run` refuses, and `validate` and `plan` with it, which import nothing of a run."""
    where = f"{spec.path or 'spec'}: output: "
    for place in (spec.output, *spec.output.parents):
        if place.exists():
            if not place.is_dir() and given:
                raise ParameterError(
                    f"{{output}} {place} is a file; it must name a folder (made if missing)",
                    "output",
                )
            if not place.is_dir():
                raise CampaignError(
                    f"{where}{place} is a file; output must name a folder (made if missing)"
                )
            break
    results = spec.output / RESULTS_FILE
    if results.exists() and not results.is_file():
        raise CampaignError(
            f"{where}{results} is not a file; move it away, `run` writes its results there"
        )


def image_path(out: str | Path) -> Path:
    """Where ``plot --out`` writes: a file of an image format matplotlib writes (``.png`` added
    to a name without a suffix) whose folder exists or can be made: checked before anything
    is read (the folder is made when the image is written)."""
    from matplotlib.backend_bases import FigureCanvasBase

    path = Path(out).expanduser()
    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    if path.is_dir():
        raise ParameterError(
            f"{{out}} {out} is a folder; give an image file such as {path / 'plot.png'}", "out"
        )
    if not path.suffix:
        path = path.with_name(f"{path.name}.png")
    if path.suffix[1:].lower() not in formats:
        raise ParameterError(
            f"{{out}} {out}: {path.suffix!r} is not an image format matplotlib writes; use "
            f"{', '.join('.' + f for f in formats)}",
            "out",
        )
    check_folder(path.parent, f"{{out}} {out}", "out")
    return path


def write_text(path: Path, text: str) -> Path:
    """Write a text file whole, or say in one line why it cannot be."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise CampaignError(f"cannot write {path}: {error.strerror}") from None
    return path
