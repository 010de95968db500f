"""What stored results were computed from: digests of the model's code and of its input files.

Stored results stay true only while the code that computed them and the files it read stay the
same. So before anything runs, a run takes a digest (BLAKE2b) of every file of the model's code
(`campaign.plan.model_code` says which files those are) and of every input file a task names
(the model's ``inputs(params)``; a folder by every file below it), keeps them in
``campaign.json`` beside the params, and compares them with those the stored results were
computed from: a change is refused in one line naming the file, unless the run is told to
compute the results it affects again or to keep them, and that choice is kept with the
digests (and written into results.nc).

Each distinct file is read once per run. A task's input is known by its path; an input found
under another path with the content of a stored one (a workloads folder moved) is no change.

A worker computes with the engine and libraries it imports, which need not be this machine's
(an older checkout on a remote machine): `engine_identity` says what they are, each worker
sends its own with every batch, and `identity_differences` says what differs from here.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from campaign.errors import CampaignError
from campaign.models import describe_error
from campaign.plan.model_code import code_name, current_model, source_files
from campaign.plan.model_libraries import model_libraries, parser_libraries
from campaign.plan.script_libraries import MODULE_PREFIX
from campaign.spec.command_model import COMMAND_MODEL
from campaign.spec.input_folder import relative_names

ALGORITHM = "blake2b-256"
ON_CHANGE = ("refuse", "rerun", "accept")
ENGINE_FOLDER = Path(__file__).resolve().parents[1]  # the `campaign` package
# libraries whose version can change a model's numbers: the random generators and arithmetic
# of numpy (every model), scipy's distributions and pandas' parsing (models and their inputs)
NUMERIC_LIBRARIES = ("numpy", "scipy", "pandas")
ENGINE_NAMES = ("campaign", "campaign code")  # of `engine_identity`: the engine's own


def file_digest(path: str | os.PathLike[str]) -> str:
    """BLAKE2b-256 of a file's bytes, read in blocks (traces may be hundreds of MB)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, lambda: hashlib.blake2b(digest_size=32)).hexdigest()


def combined_digest(files: Mapping[str, str]) -> str:
    """One digest of named file digests (names sorted)."""
    text = "".join(f"{name}\0{digest}\n" for name, digest in sorted(files.items()))
    return hashlib.blake2b(text.encode(), digest_size=32).hexdigest()


def code_files(model_name: str, found: tuple[Path, list[Path]] | None = None) -> dict[str, str]:
    """Each file of a model's code (named relative to its package's folder) -> its digest
    (``found``: its `source_files`, when known)."""
    folder, files = found or source_files(model_name)
    return {code_name(path, folder): _digest(path) for path in files}


def code_digest(model_name: str) -> str:
    """One digest of a model's code, as its files are now."""
    return combined_digest(code_files(model_name))


def engine_files(folder: Path = ENGINE_FOLDER) -> dict[str, str]:
    """Each file of the engine's code (named relative to the `campaign` package) -> its digest:
    the package less the models' own packages below ``campaign/models``, whose code is the
    model's (`code_files`)."""
    models = folder / "models"
    return {
        path.relative_to(folder).as_posix(): _digest(path)
        for path in sorted(folder.rglob("*.py"))
        if path.parent == models or models not in path.parents
    }


def engine_identity() -> dict[str, str]:
    """What, besides the model's code and inputs, decides a result's numbers in this process:
    the campaign version and a digest of its engine code, the Python version and the versions
    of `NUMERIC_LIBRARIES`. Taken once per process (a worker sends it with every batch)."""
    return dict(_engine_identity())


@lru_cache(maxsize=1)
def _engine_identity() -> tuple[tuple[str, str], ...]:
    from campaign import __version__

    identity = {
        "campaign": __version__,
        "campaign code": combined_digest(engine_files()),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }
    for name in NUMERIC_LIBRARIES:
        try:
            identity[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            identity[name] = "not installed"
    return tuple(identity.items())


def model_engine(model: object, files: list[Path] | None = None) -> dict[str, str]:
    """`engine_identity`, with the libraries a Python model (named by ``model``) imports
    (`model_libraries`; ``files``: its code's, when known), or a program's metrics parser
    (`parser_libraries`): what its results must be computed with."""
    if not isinstance(model, str):
        return {**engine_identity(), **parser_libraries(model)}
    return {**engine_identity(), **model_libraries(model, NUMERIC_LIBRARIES, files)}


def identity_differences(here: Mapping[str, str], there: Mapping[str, str] | None) -> list[str]:
    """What differs between this process's `engine_identity` and a worker's, one phrase each
    ("numpy differs (2.3.0 there, 2.4.6 here)"); nothing when they are the same."""
    if not isinstance(there, Mapping):
        return ["campaign differs (the worker does not say which engine it runs: an older one)"]
    differences = []
    for name, mine in here.items():
        theirs = str(there.get(name, "unknown"))
        if theirs == mine:
            continue
        if name == "campaign code":
            differences.append(
                f"campaign code differs (digest {theirs[:12]} there, {mine[:12]} here)"
            )
        else:
            differences.append(f"{name} differs ({theirs} there, {mine} here)")
    return differences


@dataclass
class Sources:
    """The digests of what a campaign's results are computed from, as of now.

    ``code``: each file of the model's code (named relative to its package's folder) -> digest;
    ``inputs``: each input file (absolute path) -> digest; ``cell_inputs``: per cell (by the
    cell's digest, the first part of its task keys) the input files its tasks read.
    ``programs``: per program a command runs, what it runs besides the code (its libraries,
    its interpreter; `campaign.plan.program_sources`) -> digest; ``cell_programs``: per cell
    the program a factor chose for its tasks (a program no cell is given here, every cell
    runs). ``engine``: for a Python model, the versions of Python and of the numeric
    libraries it computes with (`computing_libraries`); for a program, those of the
    libraries its metrics parser imports (`parser_libraries`).
    """

    code: dict[str, str]
    inputs: dict[str, str]
    cell_inputs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    version: str = ""  # a program's answer to its version command
    programs: dict[str, dict[str, str]] = field(default_factory=dict)
    cell_programs: dict[str, str] = field(default_factory=dict)
    engine: dict[str, str] = field(default_factory=dict)  # `computing_libraries`

    @property
    def code_digest(self) -> str:
        return combined_digest(self.code)

    def stored(self, earlier: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What campaign.json keeps. From ``earlier`` (what it kept), the digests of input files
        and programs the design no longer reads stay (a level removed and added back is no
        change)."""
        earlier = earlier or {}
        inputs = {**(earlier.get("inputs") or {}), **self.inputs}
        programs = {**(earlier.get("programs") or {}), **self.programs} if self.programs else {}
        return {
            "algorithm": ALGORITHM,
            "model_code": self.code_digest,
            "model_files": dict(sorted(self.code.items())),
            "inputs": dict(sorted(inputs.items())),
            **({"version": self.version} if self.version else {}),
            **({"programs": sorted_programs(programs)} if programs else {}),
            **({"engine": dict(sorted(self.engine.items()))} if self.engine else {}),
        }


def sorted_programs(programs: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    return {name: dict(sorted(files.items())) for name, files in sorted(programs.items())}


def task_inputs(model: Any, params: Mapping[str, Any]) -> tuple[str, ...]:
    """The input files (absolute paths) a run with these params reads, per the model."""
    if model.inputs is None:
        return ()
    try:
        named = model.heavy_inputs(params)
        return tuple(os.path.abspath(os.fspath(path)) for path in named)
    except ValueError as error:
        raise CampaignError(f"model {model.name}: {error}") from None
    except Exception as error:
        raise CampaignError(
            f"model {model.name}: inputs() failed: {describe_error(error)}"
        ) from None


def current_sources(model_name: str, cells: Iterable[tuple[str, Mapping[str, Any]]]) -> Sources:
    """Digest the model's code and every input file of the cells ((cell digest, params)),
    each file once."""
    model = current_model(model_name)
    found = source_files(model_name)
    code = code_files(model_name, found)
    cell_inputs: dict[str, tuple[str, ...]] = {}
    inputs: dict[str, str] = {}
    if model.inputs is not None:
        for cell, params in cells:
            paths = task_inputs(model, params)
            cell_inputs[cell] = paths
            for path in paths:
                if path not in inputs:
                    inputs[path] = _input_digest(model_name, path)
    engine = computing_libraries(model_name, found[1])
    return Sources(code=code, inputs=inputs, cell_inputs=cell_inputs, engine=engine)


def computing_libraries(
    model_name: str | None = None, files: list[Path] | None = None
) -> dict[str, str]:
    """The versions of Python and of `NUMERIC_LIBRARIES` in this process, and of the libraries
    the model imports (`model_libraries`): a Python model's numbers depend on them as on its
    code (another numpy, other random streams or sums), so results computed under other
    versions are stale as under other code."""
    engine = engine_identity() if model_name is None else model_engine(model_name, files)
    return {name: v for name, v in engine.items() if name not in ENGINE_NAMES}


def _digest(path: Path) -> str:
    try:
        return file_digest(path)
    except OSError as error:
        raise CampaignError(f"cannot read {path} to take its digest: {error.strerror}") from None


def _input_digest(model_name: str, path: str) -> str:
    if os.path.isdir(path):
        try:
            return folder_digest(Path(path))
        except ValueError as error:
            raise CampaignError(f"model {model_name}: input folder {path}: {error}") from None
    if not os.path.isfile(path):
        raise CampaignError(f"model {model_name}: input file {path} does not exist")
    return _digest(Path(path))


def folder_digest(folder: Path) -> str:
    """One digest of every file below a folder, each by its path relative to it: a file
    edited, added, removed or renamed changes it."""
    return combined_digest({name: _digest(path) for name, path in relative_names(folder)})


@dataclass
class Change:
    """How the current sources differ from those of the stored results."""

    code_files: list[str]  # files of the model's code changed, added or removed
    input_files: list[str]  # input files whose content is not the stored one
    cells: set[str] | None  # digests of the cells whose results it affects (None: every cell)
    program_files: dict[str, list[str]] = field(default_factory=dict)  # program -> names
    design: set[str] | None = None  # digests of the design's cells (None: not said)
    libraries: list[str] = field(default_factory=list)  # "numpy 2.3.0 then, 2.4.6 now"

    def narrowed(self, cells: set[str], sources: Sources, design: set[str]) -> Change:
        """The change as far as it concerns these cells (those with stored results) of the
        design's cells ``design``."""
        if self.cells is None:
            return self
        read = {path for cell in cells for path in sources.cell_inputs.get(cell, ())}
        files = [path for path in self.input_files if path in read]
        run = {sources.cell_programs.get(cell) for cell in cells}
        programs = {p: names for p, names in self.program_files.items() if p in run}
        return Change(self.code_files, files, self.cells & cells, programs, design, self.libraries)

    def affects(self, key: str) -> bool:
        """Whether the task with this key was computed from other sources than now, or may
        have been: a stored task beyond the design (a level the spec no longer has) read
        files the design does not say, so it counts as affected by any change."""
        return self.cells is None or key[:16] in self.cells or self.beyond(key)

    def beyond(self, key: str) -> bool:
        """Whether the task with this key is of a cell the design does not have (when said)."""
        return self.design is not None and key[:16] not in self.design

    def describe(self, model: str) -> str:
        parts = []
        if self.code_files and model == COMMAND_MODEL:
            parts.append(f"the program or its inputs changed ({_listed(self.code_files)})")
        elif self.code_files:
            parts.append(f"the code of model {model} changed ({_listed(self.code_files)})")
        if self.input_files:
            noun = "input file" if len(self.input_files) == 1 else "input files"
            parts.append(f"{noun} {_listed(self.input_files)} changed")
        for program, names in self.program_files.items():
            if names == [program]:
                parts.append(f"program {program} changed")
            else:
                what = "program {0} or what it runs" if program in names else "what {0} runs"
                parts.append(f"{what.format(program)} changed ({_listed(names)})")
        if self.libraries:
            what = f"the libraries model {model} computes with"
            if model == COMMAND_MODEL:
                what = "the libraries its metrics parser computes with"
            parts.append(f"{what} changed ({_listed(self.libraries)})")
        return " and ".join(parts)


def compare(stored: Mapping[str, Any] | None, current: Sources) -> Change | None:
    """The change between stored digests (campaign.json) and the current ones, or None."""
    if not stored:
        return None  # results stored before digests were kept: nothing to compare
    old_code = stored.get("model_files") or {}
    code_files = sorted(
        name
        for name in set(old_code) | set(current.code)
        if old_code.get(name) != current.code.get(name)
    )
    if stored.get("model_code") != current.code_digest and not code_files:
        code_files = ["its files"]
    old_inputs = stored.get("inputs") or {}
    known = set(old_inputs.values())
    changed = sorted(
        path
        for path, digest in current.inputs.items()
        if old_inputs.get(path, digest if digest in known else None) != digest
    )
    programs = program_changes(stored.get("programs"), current.programs)
    libraries = library_changes(stored.get("engine"), current.engine)
    if not code_files and not changed and not programs and not libraries:
        return None
    cells = None
    chosen = set(current.cell_programs.values())
    if not code_files and not libraries and all(program in chosen for program in programs):
        changed_set = set(changed)
        cells = {
            cell for cell, paths in current.cell_inputs.items() if changed_set.intersection(paths)
        }
        cells |= {cell for cell, program in current.cell_programs.items() if program in programs}
    return Change(code_files, changed, cells, programs, libraries=libraries)


def library_changes(stored: Mapping[str, str] | None, current: Mapping[str, str]) -> list[str]:
    """Each library whose version is not the stored one, in words ("numpy 2.3.0 then, 2.4.6
    now"); none for results stored before versions were kept."""
    if not stored or not current:
        return []
    return [
        f"{name} {stored.get(name, 'unknown')} then, {version} now"
        for name, version in current.items()
        if stored.get(name, version) != version
    ]


def program_difference(
    a: Mapping[str, Mapping[str, str]] | None, b: Mapping[str, Mapping[str, str]] | None
) -> str | None:
    """How the programs two campaign.json's sources name differ, in words (None: the same, or
    one of them kept none: stored before libraries were digested)."""
    changed = program_changes(a, b or {}) if b is not None else {}
    if not changed:
        return None
    program, names = next(iter(changed.items()))
    return f"program {program} ran with other files: {_listed(names)} differ"


def program_changes(
    stored: Mapping[str, Mapping[str, str]] | None, current: Mapping[str, Mapping[str, str]]
) -> dict[str, list[str]]:
    """Per program, the names of what it runs whose digest is not the stored one (none for
    results stored before programs' libraries were digested: nothing to compare)."""
    if stored is None:
        return {}
    changes = {}
    for program, files in sorted(current.items()):
        old = stored.get(program) or {}
        names = sorted(
            name
            for name in {*old, *files}
            if old.get(name) != files.get(name) and (name in old or not _unlisted_module(name))
        )
        if names:
            changes[program] = names
    return changes


def _unlisted_module(name: str) -> bool:
    """A Python library a program imports (`campaign.plan.script_libraries`): one the stored
    results do not name was not listed when they were stored (or the program's code, which
    names it, changed: a change of its own)."""
    return name.startswith(MODULE_PREFIX)


def _listed(names: list[str], most: int = 3) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
