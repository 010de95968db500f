"""How a Python finds the top-level modules named: the version of the installed distribution
each comes from, or a digest of its files when none holds them (a package on PYTHONPATH, an
editable install). Standard library only, and no syntax newer than Python 3.8: besides being
imported here (`campaign.plan.model_libraries`), its text runs in a program's own interpreter
(``python3 -c``, `campaign.plan.script_libraries`), which prints the answer as JSON."""

import hashlib
import importlib.util
import json
import os
import sys

CODE_SUFFIXES = (".py", ".so", ".pyd")
NOT_MODULES = (".dist-info", ".egg-info", ".data")  # folders a distribution installs beside


def describe(name):
    """[how module ``name`` is here, the file it is loaded from (None when not found)]."""
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.has_location or not spec.origin:
            return ["not installed", None]
        origin = spec.origin
    origin = os.path.realpath(origin)
    version = _installed_version(name, origin)
    if version is not None:
        return [version, origin]
    return ["code " + _files_digest(origin), origin]


_DISTRIBUTIONS = {}  # the installed distributions by top-level module, per module path


def _installed_version(name, origin):
    """The version of the installed distribution whose files hold ``origin``, if one does."""
    for distribution in _distributions_by_module().get(name, []):
        base = os.path.realpath(str(distribution.locate_file("")))
        if origin.startswith(base.rstrip(os.sep) + os.sep):
            return distribution.version
    return None


def _distributions_by_module():
    """Top-level module -> the distributions that install it, read once per module path.

    From each distribution's ``top_level.txt``, else from the paths its ``RECORD`` lists, read
    as text: ``importlib.metadata.packages_distributions`` checks that every file of every
    distribution exists (a second in a small venv, many in a large one), on the driver and on
    every worker."""
    where = tuple(sys.path)
    if where not in _DISTRIBUTIONS:
        _DISTRIBUTIONS.clear()
        found = {}
        for distribution in _all_distributions():
            for module in _top_level_names(distribution):
                found.setdefault(module, []).append(distribution)
        _DISTRIBUTIONS[where] = found
    return _DISTRIBUTIONS[where]


def _all_distributions():
    try:
        import importlib.metadata as metadata
    except ImportError:  # before Python 3.8
        return []
    return list(metadata.distributions())


def _top_level_names(distribution):
    listed = distribution.read_text("top_level.txt")
    if listed is not None:
        return {line.strip().replace("/", ".").partition(".")[0] for line in listed.split()}
    record = distribution.read_text("RECORD")
    if record is not None:
        paths = [line.rpartition(",")[0].rpartition(",")[0] for line in record.splitlines()]
    else:  # an egg-info install without RECORD
        paths = [str(path) for path in distribution.files or []]
    names = set()
    for path in paths:
        first, slash, _ = path.replace("\\", "/").partition("/")
        if slash and not first.endswith(NOT_MODULES) and first not in ("..", "__pycache__"):
            names.add(first)
        elif not slash and first.endswith(CODE_SUFFIXES):
            names.add(first.partition(".")[0])
    return names


def _files_digest(origin):
    """A digest of a module's file, or of every code file of its package."""
    if os.path.basename(origin).startswith("__init__."):
        top = os.path.dirname(origin)
        paths = []
        for root, folders, names in os.walk(top):
            folders[:] = sorted(f for f in folders if not f.startswith((".", "__pycache__")))
            paths += [os.path.join(root, n) for n in sorted(names) if n.endswith(CODE_SUFFIXES)]
    else:
        top, paths = os.path.dirname(origin), [origin]
    digest = hashlib.blake2b(digest_size=8)
    for path in paths:
        with open(path, "rb") as handle:
            content = hashlib.blake2b(handle.read(), digest_size=32).hexdigest()
        digest.update(f"{os.path.relpath(path, top)}\0{content}\n".encode())
    return digest.hexdigest()


if __name__ == "__main__":  # python3 -c TEXT NAME ...: the answer, and where to look for changes
    answer = {name: describe(name) for name in sys.argv[1:]}
    print(json.dumps({"modules": answer, "path": [os.path.abspath(p) for p in sys.path if p]}))
