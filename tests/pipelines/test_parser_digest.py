"""Which code a metrics parser's digest covers: a change to any file the parser reads its
outputs through changes the digest that remetric records and runs compare."""

from __future__ import annotations

import hashlib
from pathlib import Path

import campaign.execute.command_metrics as command_metrics
import campaign.execute.metric_text as metric_text
from campaign.results.metric_parsers import code_digest, command_parser
from campaign.spec.command_model import MetricsSource


def test_the_built_in_parser_is_digested_with_the_text_reader_it_parses_through():
    both = Path(command_metrics.__file__).read_bytes() + Path(metric_text.__file__).read_bytes()
    parser = command_parser(MetricsSource("stdout"))
    assert parser.digest == "sha256:" + hashlib.sha256(both).hexdigest()


def test_a_function_is_digested_by_its_own_file_once():
    alone = Path(metric_text.__file__).read_bytes()
    expected = "sha256:" + hashlib.sha256(alone).hexdigest()
    assert code_digest(metric_text.read_metrics) == expected
    assert code_digest(metric_text.read_metrics, metric_text.read_numbers) == expected
