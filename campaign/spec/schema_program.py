"""The keys of a program as a spec's model (``model: {command: [...]}``), of its declared
metrics and of ``resources:``: part of the spec's description (`campaign.spec.schema`)."""

from __future__ import annotations

from campaign.models.contract import BREAKDOWN, SAMPLE, SCALAR
from campaign.spec.schema_model import (
    COMMAND,
    FLAG,
    LEVEL,
    NAMES,
    SIZE,
    TEXT,
    Key,
    Section,
    count,
    one_of,
)

KINDS = {
    SCALAR: "a number (the default)",
    SAMPLE: "a 1-D array of numbers per task: a JSON array, or a file of one number per line "
    "or a CSV column (file:, column:)",
    BREAKDOWN: "metrics per label of a dimension named by the metric: a JSON object "
    '{"label": {"metric": number}}',
}

RESOURCES = Section(
    "resources",
    "what one task needs",
    "What one task needs of a worker, as Dask worker resources: a task runs only on a worker "
    "that declares at least as much, and never shares those cores.",
    (
        Key("cores", "cores one task uses ({cores} in a program's command)", count(1), 1),
        Key("memory", "memory one task needs: bytes, or a size such as 8GB or 512MiB", SIZE),
    ),
)
DECLARE = Section(
    "model.declare.METRIC",
    "a declared metric",
    "What one metric of a program is: its units, long name and kind. With declare, every "
    "metric the program gives is declared, and each must come in its declared kind.",
    (
        Key("kind", "what the program gives for it", one_of(*KINDS), SCALAR),
        Key(
            "units",
            "its units, as results.nc and the tables show them",
            {"type": ["string", "number"]},
            "1",
        ),
        Key(
            "long_name",
            "its name in words, for tables and figures' labels",
            TEXT,
            default_text="the metric's name",
        ),
        Key(
            "file",
            "a sample in a file of the task's folder: one number per line (or a CSV with column:)",
            TEXT,
        ),
        Key("column", "the column of file: (a CSV with a header row) that holds the sample", TEXT),
    ),
)
METRICS_SOURCE = Section(
    "model.metrics",
    "a metrics file or parser",
    "Where a program's metrics come from besides stdout: exactly one key.",
    (
        Key(
            "file",
            "a file the program writes in its folder: JSON, key=value lines, or a CSV "
            "of a header and one row",
            TEXT,
        ),
        Key(
            "parse",
            "package.module:function called with the task's folder, returning {metric: value}",
            {"type": "string", "pattern": r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"},
        ),
    ),
    one_of=("file", "parse"),
)
PROGRAM = Section(
    "model",
    "model: a program",
    "A program as the model: its command line per task, the files it needs, where its "
    "metrics come from and what is kept of its outputs.",
    (
        Key(
            "command",
            "the program and its arguments, one list item each ({name} "
            "placeholders); with shell: true, also one string",
            {
                "anyOf": [
                    {"type": "array", "minItems": 1, "items": {"type": ["string", "number"]}},
                    TEXT,
                ]
            },
            required=True,
        ),
        Key(
            "inputs",
            "files the program needs, relative to the spec (placed in each task's "
            "folder, digested); a folder: every file below it",
            NAMES,
            [],
        ),
        Key(
            "templates",
            "files whose {name} placeholders are filled per task in the task's folder",
            NAMES,
            [],
        ),
        Key(
            "metrics",
            "where the metrics come from: stdout (a JSON object or key=value lines), "
            "{file: NAME} or {parse: module:function}",
            {
                "anyOf": [
                    {"const": "stdout"},
                    {
                        "$ref": "#/definitions/metrics_source",
                        "title": "{file: NAME} or {parse: module:function}",
                    },
                ]
            },
            "stdout",
        ),
        Key(
            "declare",
            "what each metric is: {METRIC: {units, long_name, kind, file, column}}",
            {
                "type": "object",
                "additionalProperties": {"$ref": "#/definitions/declare"},
                "title": "a mapping METRIC: {kind, units, long_name, file, column}",
            },
        ),
        Key(
            "keep",
            "outputs kept with the task's record: stdout, stderr, files of its folder "
            "(names or shell globs: * within a folder, ** across folders)",
            NAMES,
            default_text="a failed task's stdout and stderr",
        ),
        Key("keep_limit", "most bytes kept per task: bytes, or a size such as 50MB", SIZE, "100MB"),
        Key("shell", "true: the command is one shell line run by /bin/sh", FLAG, False),
        Key("labels", "factors that no placeholder uses: they only label the results", NAMES),
        Key(
            "resources",
            "what one task needs of a worker (or at the spec's top, not both)",
            section=RESOURCES,
        ),
        Key(
            "version", "a command printing the program's version, stored in the provenance", COMMAND
        ),
        Key(
            "env",
            "environment variables set for the program, {NAME: value}: part of what results mean",
            {"type": "object", "additionalProperties": LEVEL, "title": "a mapping NAME: value"},
        ),
    ),
)
