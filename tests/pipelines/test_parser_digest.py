"""Which code a metrics parser's digest covers: a change to any file the parser reads its
outputs through (a helper module it imports too) changes the digest that remetric records
and runs compare."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

import campaign.execute.command_metrics as command_metrics
import campaign.execute.metric_text as metric_text
from campaign.pipelines.remetric import absorb_parser
from campaign.plan.sources import Sources, combined_digest
from campaign.results.metric_parsers import command_parser
from campaign.results.parser_code import code_digest
from campaign.spec.command_model import MetricsSource
from campaign.store.ledger import Ledger


def test_the_built_in_parser_is_digested_with_the_text_reader_it_parses_through():
    both = Path(command_metrics.__file__).read_bytes() + Path(metric_text.__file__).read_bytes()
    parser = command_parser(MetricsSource("stdout"))
    assert parser.digest == "sha256:" + hashlib.sha256(both).hexdigest()


def test_a_function_is_digested_by_its_own_file_once():
    alone = Path(metric_text.__file__).read_bytes()
    expected = "sha256:" + hashlib.sha256(alone).hexdigest()
    assert code_digest(metric_text.read_metrics) == expected
    assert code_digest(metric_text.read_metrics, metric_text.read_numbers) == expected


PARSER = """
from scale_of import FACTOR


def scaled(folder):
    return {"y": FACTOR * float((folder / "stdout").read_text())}
"""


@pytest.fixture
def beside(tmp_path, monkeypatch):
    """A folder on the path holding a parser module and the helper module it imports, both
    imported afresh by each test (as by a new process)."""
    (tmp_path / "scaling.py").write_text(PARSER)
    (tmp_path / "scale_of.py").write_text("FACTOR = 10\n")
    (tmp_path / "unused.py").write_text("NOT_IMPORTED = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("scaling", "scale_of"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield tmp_path
    for name in ("scaling", "scale_of"):
        sys.modules.pop(name, None)


def parse_digest(name: str) -> str:
    for module in ("scaling", "scale_of"):
        sys.modules.pop(module, None)  # as a new process: the code as it is now
    return command_parser(MetricsSource("parse", name)).digest


def test_a_parser_of_one_file_is_digested_by_that_file_alone(beside):
    (beside / "alone.py").write_text("def y(folder):\n    return {'y': 1.0}\n")
    expected = "sha256:" + hashlib.sha256((beside / "alone.py").read_bytes()).hexdigest()
    assert parse_digest("alone:y") == expected  # as before helpers were digested
    sys.modules.pop("alone", None)


def test_a_parsers_digest_covers_the_helper_module_it_imports_beside_it(beside):
    first = parse_digest("scaling:scaled")
    own = (beside / "scaling.py").read_bytes()
    assert first != "sha256:" + hashlib.sha256(own).hexdigest()
    assert parse_digest("scaling:scaled") == first  # the same code, the same digest
    (beside / "unused.py").write_text("NOT_IMPORTED = 2\n")  # not its code
    assert parse_digest("scaling:scaled") == first
    (beside / "scale_of.py").write_text("FACTOR = 1000\n")
    edited = parse_digest("scaling:scaled")
    assert edited != first
    (beside / "scale_of.py").write_text("FACTOR = 10\n")
    assert parse_digest("scaling:scaled") == first


def test_a_remetric_with_the_specs_parser_records_the_libraries_it_computed_with(tmp_path):
    """Once every finished task was recomputed with the spec's parser, campaign.json names
    the libraries that parser imports as they are now, beside its code: `run` would refuse
    the recomputed results as computed with the libraries of before."""
    ledger = Ledger(tmp_path)
    old = {"parser: p.py": "1", "sim": "2"}
    stored = {"model_files": old, "model_code": combined_digest(old), "engine": {"lib": "1.0"}}
    ledger.write_identity({"sources": stored})
    current = Sources(code={"parser: p.py": "1", "sim": "3"}, inputs={}, engine={"lib": "2.0"})
    assert absorb_parser(ledger, current)
    sources = ledger.read_identity()["sources"]
    assert sources["engine"] == {"lib": "2.0"}
    assert sources["model_files"] == old  # the program's own files: not the parser's
    assert not absorb_parser(ledger, current)  # nothing more to record
