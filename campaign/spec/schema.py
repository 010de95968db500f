"""Every key a spec may hold, described once: its type and allowed values (as JSON Schema),
its default and a one-line description, mapping by mapping.

The spec parser checks the keys of each mapping against its section here (an unknown key
or a missing required one is one line listing the allowed keys) before it checks each
value; the reference page of the documentation and the JSON Schema that editors read
(`campaign schema`, `campaign.spec.json_schema`) are written from these sections. A key
added here is allowed, documented and in the schema at once; a key the parser reads that
is missing here is refused (tests/spec/test_schema.py holds every spec of the project
against both).
"""

from __future__ import annotations

from campaign.design import points as designs
from campaign.spec.names import FACTOR_PATTERN, NAME_PATTERN
from campaign.spec.schema_model import (
    FLAG,
    LEVEL,
    NAMES,
    SOME_NAMES,
    TEXT,
    Key,
    Section,
    count,
    one_of,
    positive,
)
from campaign.spec.schema_program import (
    DECLARE,
    METRICS_SOURCE,
    PROGRAM,
    RESOURCES,
)

PROCEDURES = {
    "kn": "Kim & Nelson's fully sequential KN (common random numbers through paired seeds)",
    "kn++": "KN++: KN with variances updated at every stage",
    "ocba": "Chen's OCBA: spends budget tasks per group where they matter most (no guarantee)",
    "gsp": "the Good Selection Procedure of Ni, Ciocan, Henderson & Hunter, for many workers",
}
PRECISION = Section(
    "precision",
    "a precision target",
    "A precision target instead of a fixed replicate count: replicates are added to each "
    "cell, in rounds, until the interval of every listed metric is narrow enough.",
    (
        Key("metrics", "metrics whose intervals must reach the target", SOME_NAMES, required=True),
        Key("half_width", "target half-width of the interval", positive(), required=True),
        Key(
            "relative",
            "true: half_width is a fraction of |mean| below 1 (0.05: 5%); false: in metric units",
            FLAG,
            True,
        ),
        Key("min_replicates", "replicates run before any interval is trusted", count(2), 5),
        Key(
            "max_replicates",
            "most replicates a cell may get (>= min_replicates)",
            count(2),
            required=True,
        ),
        Key(
            "confidence",
            "confidence level of the intervals that must meet the target",
            {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            0.95,
        ),
    ),
)
SELECT = Section(
    "select",
    "a selection of the best system",
    "Ranking and selection of the best system, in stages, instead of a fixed replicate "
    "count: replicates go only to the systems still in contention.",
    (
        Key("metric", "the metric the best system has the best mean of", TEXT, required=True),
        Key("goal", "which mean is best", one_of("min", "max"), required=True),
        Key(
            "among",
            "the factor whose levels are the systems, at each combination of the others",
            TEXT,
            default_text="every cell is a system",
        ),
        Key(
            "procedure",
            "the selection procedure (its guarantee: the how-to guide)",
            one_of(*PROCEDURES),
            "kn",
        ),
        Key(
            "indifference",
            "delta: a difference the selection may ignore, in the metric's units",
            positive(),
            required=True,
        ),
        Key(
            "relative",
            "true: indifference is a share of the best first-stage mean (below 1), an estimate",
            FLAG,
            False,
        ),
        Key(
            "pcs",
            "the probability of a correct selection (above 1/systems)",
            {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            0.95,
        ),
        Key("first", "first-stage replicates per system", count(2), 10),
        Key("batch", "replicates added per stage to each system in contention", count(1), 5),
        Key("budget", "tasks per group that ocba spends (ocba only, and required there)", count(1)),
        Key("max_replicates", "most replicates a system may get (>= first)", count(2), 1000),
        Key("rounds", "gsp's screening rounds before its final stage (gsp only)", count(1), 10),
    ),
)
RANGE = Section(
    "factors.FACTOR",
    "a range",
    "A factor drawn over a range in a design of points (latin_hypercube, sobol, saltelli, "
    "morris); elsewhere such a mapping is two labelled levels.",
    (
        Key("low", "the range's lower bound", {"type": "number"}, required=True),
        Key("high", "the range's upper bound (> low)", {"type": "number"}, required=True),
        Key(
            "scale",
            "drawn uniformly in the value, or in log(value) (log needs low > 0)",
            one_of(*designs.SCALES),
            designs.LINEAR,
        ),
        Key("integer", "true: integers low..high, each with its share of the range", FLAG, False),
    ),
)
POINTS = count(1) | {"maximum": designs.MAX_POINTS}
DESIGNS = {
    designs.FRACTIONAL: Section(
        "design.fractional",
        "a two-level fraction",
        "A regular two-level fraction 2^(k-p): every factor has two levels (low, high); give "
        "generators or resolution.",
        (
            Key(
                "generators",
                "each generated factor as a signed product of others, {d: a*b*c, e: -a*b}",
                {
                    "type": "object",
                    "additionalProperties": TEXT,
                    "title": "a mapping FACTOR: a*b*c",
                },
            ),
            Key(
                "resolution", "the smallest standard fraction of at least this resolution", count(3)
            ),
        ),
        one_of=("generators", "resolution"),
    ),
    designs.LATIN_HYPERCUBE: Section(
        "design.latin_hypercube",
        "a Latin hypercube",
        "Points over the ranges, one in each stratum of every range, drawn from the seed.",
        (
            Key(
                "points",
                "how many design points, e.g. points: 20 (a Latin hypercube grows by sizes, each a "
                "multiple of the one before: [20, 40])",
                {"anyOf": [POINTS, {"type": "array", "items": POINTS, "minItems": 1}]},
                required=True,
            ),
        ),
    ),
    designs.SOBOL: Section(
        "design.sobol",
        "a Sobol sequence",
        "The first points of a scrambled Sobol sequence over the ranges (balanced at powers of 2).",
        (Key("points", "how many design points, e.g. points: 20", POINTS, required=True),),
    ),
    designs.SALTELLI: Section(
        "design.saltelli",
        "Saltelli's sample",
        "Saltelli's sample (SALib) for Sobol indices: N (k + 2) points for k ranges, "
        "N (2k + 2) with second_order.",
        (
            Key("points", "how many base samples, e.g. points: 32", count(2), required=True),
            Key("second_order", "true: also the points second-order indices need", FLAG, True),
        ),
    ),
    designs.MORRIS: Section(
        "design.morris",
        "Morris trajectories",
        "Morris's trajectories (SALib) for screening: N trajectories of k + 1 points.",
        (
            Key(
                "trajectories",
                "how many trajectories, e.g. trajectories: 32",
                count(2),
                required=True,
            ),
            Key(
                "levels",
                "levels of the grid the trajectories step on",
                count(2) | {"multipleOf": 2},
                4,
            ),
        ),
    ),
}
DESIGN_VALUE = {
    "title": "full, or a mapping {KIND: {options}} of one kind: " + ", ".join(DESIGNS),
    "anyOf": [
        {"const": designs.FULL},
        {
            "type": "object",
            "properties": {designs.FULL: {"type": ["object", "null"], "maxProperties": 0}},
            "required": [designs.FULL],
            "additionalProperties": False,
            "title": "{full: {}}",
        },
        *(
            {"$ref": f"#/definitions/design_{kind}", "title": f"{{{kind}: {{...}}}}"}
            for kind in DESIGNS
        ),
    ],
}
FACTOR_VALUE = {  # levels, labelled levels or a range (a range is a mapping of labels too)
    "title": "a list of levels, a mapping label: value, or a range {low, high}",
    "anyOf": [
        {"type": "array", "minItems": 1, "items": LEVEL},
        {"$ref": "#/definitions/range", "title": "a range {low, high}"},
        {"type": "object", "minProperties": 1},
        LEVEL,
    ],
}
SPEC = Section(
    "",
    "top level",
    "A spec is one YAML mapping; exactly one of replicates, precision and select says how "
    "many replicates each cell gets.",
    (
        Key(
            "name",
            "the campaign's name: it names the output folder and the dataset",
            {"type": "string", "pattern": NAME_PATTERN.pattern},
            required=True,
        ),
        Key(
            "description",
            "free text: the source design it reproduces, what differs and why",
            {"type": "string"},
        ),
        Key(
            "model",
            "a registered model (campaign models), 'package.module:function', or a "
            "program: {command: [...], inputs: [...]}",
            {"anyOf": [TEXT, {"$ref": "#/definitions/program", "title": "a mapping (a program)"}]},
            required=True,
        ),
        Key(
            "params",
            "parameters fixed for every run",
            {"type": "object", "title": "a mapping NAME: value"},
            {},
        ),
        Key(
            "factors",
            "factor -> its levels: a list, a mapping label -> value, or a range "
            "{low, high} in a design of points",
            {
                "type": "object",
                "title": "a mapping FACTOR: its levels",
                "propertyNames": {"pattern": FACTOR_PATTERN.pattern},
                "additionalProperties": FACTOR_VALUE,
            },
            {},
        ),
        Key(
            "design",
            "which cells run: full, or one of fractional, latin_hypercube, sobol, "
            "saltelli, morris with its options",
            DESIGN_VALUE,
            designs.FULL,
        ),
        Key("paired", "factors whose levels share seeds (common random numbers)", NAMES, []),
        Key("replicates", "replicates of every cell", count(1)),
        Key(
            "precision", "a precision target instead of a fixed replicate count", section=PRECISION
        ),
        Key(
            "select",
            "a selection of the best system instead of a fixed replicate count",
            section=SELECT,
        ),
        Key("seed", "the base seed: every task's seed follows from it", count(0), required=True),
        Key(
            "metrics", "the metrics kept", SOME_NAMES, default_text="every metric the model returns"
        ),
        Key(
            "percentiles",
            "whole percentiles of each sample kept as metrics",
            {
                "type": "array",
                "minItems": 1,
                "uniqueItems": True,
                "items": {"type": "number", "minimum": 0, "maximum": 100, "multipleOf": 1},
            },
            [50, 95, 99],
        ),
        Key(
            "output",
            "the output folder, relative to the spec (~ is your home folder)",
            TEXT,
            default_text="outputs/NAME in the folder where campaign runs",
        ),
        Key("resources", "what one task needs of a worker", section=RESOURCES),
    ),
    one_of=("replicates", "precision", "select"),
    allowed_word="allowed keys",
)
SECTIONS = (
    SPEC,
    PRECISION,
    SELECT,
    PROGRAM,
    METRICS_SOURCE,
    DECLARE,
    RESOURCES,
    RANGE,
    *DESIGNS.values(),
)
