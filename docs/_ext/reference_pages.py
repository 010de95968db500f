"""The reference pages' generated parts, written from the code as Markdown: every command and
option (from the parser `campaign.cli.main.build_parser` builds, and each model's own commands'
help), every built-in model's params and metrics (from its declaration), and the spec's keys
(from the spec's description, `campaign.spec.schema`, which the spec parser checks keys
against). Nothing here is written by hand, so a
changed option, param or key changes the site at its next build."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re

MARKDOWN_SPECIAL = re.compile(r"([\\*_\[\]<>#|~])")
CODE_SPAN = re.compile(r"(`[^`]*`)")


def escaped(text: str) -> str:
    """Plain help text as Markdown that shows it as written: special characters escaped,
    except inside `code spans`, which stay code."""
    parts = CODE_SPAN.split(text)
    return "".join(p if p.startswith("`") else MARKDOWN_SPECIAL.sub(r"\\\1", p) for p in parts)


def anchor(command: str) -> str:
    """The label of a command's section: ``(command-plan)=`` for ``campaign plan``."""
    return "command-" + command.replace(" ", "-")


# ---------------------------------------------------------------------------------------
# Commands


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each sub-command, in the order of ``--help``."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((name, helps.get(name, ""), sub))
    return found


def _option_term(action: argparse.Action) -> str:
    """The definition list's term of one argument: its option strings and metavar."""
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    if action.nargs == 0:
        shown = action.option_strings
    else:
        metavar = action.metavar or (
            "{" + ",".join(map(str, action.choices)) + "}"
            if action.choices
            else action.dest.upper()
        )
        shown = [f"{option} {metavar}" for option in action.option_strings]
    return ", ".join(f"`{s}`" for s in shown)


def _option_text(action: argparse.Action) -> str:
    text = escaped(action.help or "")
    extras = []
    if action.choices and action.option_strings:
        extras.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    told = "(default" in (action.help or "")  # the help text says it already
    if action.option_strings and action.nargs != 0 and action.default not in (None, [], False):
        if not told:
            extras.append(f"default `{action.default}`")
    if not action.option_strings and action.nargs in ("?", "*"):
        extras.append("optional")
    if extras:
        text += f" ({'; '.join(extras)})" if text else "; ".join(extras)
    return text or "(no help text)"


def _usage(parser: argparse.ArgumentParser) -> str:
    """The usage lines, without argparse's "usage: " before them and its indent after."""
    with _columns(100):
        lines = parser.format_usage().removeprefix("usage: ").rstrip().splitlines()
    indent = len("usage: ")
    return "\n".join([lines[0], *(line[indent:] for line in lines[1:])])


@contextlib.contextmanager
def _columns(width: int):
    """argparse wraps to $COLUMNS: a fixed width makes the page the same on every machine."""
    earlier = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if earlier is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = earlier


def _command_section(name: str, summary: str, parser: argparse.ArgumentParser, level: int) -> list:
    lines = [f"({anchor(name)})=", f"{'#' * level} `{name}`", ""]
    if summary:
        lines += [escaped(summary[0].upper() + summary[1:]) + ".", ""]
    lines += ["```text", _usage(parser), "```", ""]
    arguments = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    arguments = [a for a in arguments if not isinstance(a, argparse._SubParsersAction)]
    for action in arguments:
        lines += [_option_term(action), f": {_option_text(action)}", ""]
    for sub_name, sub_summary, sub in _subcommands(parser):
        lines += _command_section(f"{name} {sub_name}", sub_summary, sub, level + 1)
    return lines


def model_commands() -> list[tuple[str, str, str, str]]:
    """(command, its help line, the model declaring it, its ``--help`` text) of every command
    that a built-in model declares."""
    from campaign.models import BUILTIN, load_model

    found = []
    for model_name in BUILTIN:
        for command in load_model(model_name).commands:
            printed = io.StringIO()
            with (
                _columns(100),
                contextlib.redirect_stdout(printed),
                contextlib.suppress(SystemExit),
            ):
                command.main(["--help"])
            found.append((command.name, command.help, model_name, printed.getvalue().rstrip()))
    return found


def commands_markdown() -> str:
    """Every command of `campaign`, its usage and each argument with its help."""
    from campaign.cli.main import build_parser

    parser = build_parser()
    lines = ["| command | what it does |", "|---|---|"]
    subcommands = _subcommands(parser)
    for name, summary, _ in subcommands:
        lines.append(f"| [`campaign {name}`](#{anchor('campaign ' + name)}) | {escaped(summary)} |")
    for name, summary, model, _ in model_commands():
        target = anchor("campaign " + name)
        lines.append(f"| [`campaign {name}`](#{target}) | {escaped(summary)} (model `{model}`) |")
    lines += ["", "Options of every command:", ""]
    for action in parser._actions:
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            lines += [_option_term(action), f": {_option_text(action)}", ""]
    for name, summary, sub in subcommands:
        lines += _command_section(f"campaign {name}", summary, sub, 2)
    for name, summary, model, text in model_commands():
        lines += [f"({anchor('campaign ' + name)})=", f"## `campaign {name}`", ""]
        lines += [f"{escaped(summary[0].upper() + summary[1:])}: a command of model `{model}`.", ""]
        lines += ["```text", text, "```", ""]
    return "\n".join(lines)


def option_strings() -> list[tuple[str, str]]:
    """(command, option) of every option of every built-in command but ``--help``: what the
    page must show."""
    from campaign.cli.main import build_parser

    found = []

    def walk(prefix: str, parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            if not isinstance(action, argparse._HelpAction):
                found.extend((prefix, option) for option in action.option_strings)
        for name, _, sub in _subcommands(parser):
            walk(f"{prefix} {name}", sub)

    walk("campaign", build_parser())
    return found


# ---------------------------------------------------------------------------------------
# Models


def models_markdown() -> str:
    """Each built-in model: what it simulates, its params and metrics tables, headline
    metrics, its own commands and example params, from its declaration."""
    from campaign.models import BUILTIN, load_model
    from campaign.models.describe import markdown_tables

    lines = ["| model | what it simulates | declared in |", "|---|---|---|"]
    for name, reference in BUILTIN.items():
        summary = escaped(load_model(name).summary)
        lines.append(f"| [`{name}`](#model-{name}) | {summary} | `{reference}` |")
    lines.append("")
    for name, reference in BUILTIN.items():
        model = load_model(name)
        lines += [f"(model-{name})=", f"## `{name}`", "", escaped(model.summary), ""]
        lines += [f"Declared by `{reference}`; `campaign models show {name}` prints the same.", ""]
        lines += [markdown_tables(model), ""]
        if model.headline:
            headline = ", ".join(f"`{m}`" for m in model.headline)
            lines += [f"Headline metrics (rankings and reports by default): {headline}.", ""]
        for command in model.commands:
            target = anchor("campaign " + command.name)
            lines += [f"Command: [`campaign {command.name}`](commands.md#{target}).", ""]
        if model.example:
            lines += ["Example params:", "", "```yaml", _yaml(model.example), "```", ""]
    return "\n".join(lines)


def _yaml(value: object) -> str:
    import yaml

    return yaml.safe_dump(value, sort_keys=False, default_flow_style=None).rstrip()


# ---------------------------------------------------------------------------------------
# Spec keys


def _default(key) -> str:
    if key.default_text:
        return escaped(key.default_text)
    if not key.has_default:
        return ""
    value = key.default
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    return f"`{json.dumps(value) if isinstance(value, list | dict) else value}`"


def _section(section, level: int = 2) -> list[str]:
    """A mapping of the spec: its doc, then a row per key: its type and allowed values, its
    default and what it is."""
    title = "Top-level keys" if not section.where else f"`{section.where}`: {section.title}"
    lines = [f"({spec_anchor(section)})=", f"{'#' * level} {title}", "", escaped(section.doc), ""]
    if section.one_of:
        given = ", ".join(f"`{name}`" for name in section.one_of)
        lines += [f"Exactly one of {given} is given.", ""]
    lines += ["| key | type and allowed values | default | what it is |", "|---|---|---|---|"]
    for key in section.keys:
        mark = " (required)" if key.required else ""
        kind = (
            f"mapping: [{key.section.title}](#{spec_anchor(key.section)})"
            if key.section
            else escaped(key.words())
        )
        lines.append(f"| `{key.name}`{mark} | {kind} | {_default(key)} | {escaped(key.doc)} |")
    return lines + [""]


def spec_anchor(section) -> str:
    """Its label: an HTML id as docutils writes it (no dots or underscores)."""
    return "spec-" + (re.sub(r"[._]", "-", section.where).lower() or "top")


def spec_keys_markdown() -> str:
    """Every key a spec may hold, mapping by mapping, from the spec's description
    (`campaign.spec.schema`), which the parser checks keys against."""
    from campaign.spec.placeholders import TASK_PLACEHOLDERS
    from campaign.spec.schema import DESIGNS, PRECISION, PROCEDURES, RANGE, SELECT, SPEC
    from campaign.spec.schema_program import DECLARE, KINDS, METRICS_SOURCE, PROGRAM, RESOURCES

    lines = [*_section(SPEC), *_section(RESOURCES), *_section(PRECISION), *_section(SELECT)]
    lines += ["Its `procedure`:", "", "| procedure | what it is |", "|---|---|"]
    lines += [f"| `{name}` | {escaped(text)} |" for name, text in PROCEDURES.items()]
    lines += ["", "## Designs and ranges", ""]
    lines += [
        "`design: full` (the default) runs every cell of the factors; any other design is a "
        "mapping of one kind to its options.",
        "",
    ]
    for section in (*DESIGNS.values(), RANGE):
        lines += _section(section, 3)
    lines += ["## A program as the model", ""]
    lines += _section(PROGRAM, 3) + _section(METRICS_SOURCE, 3) + _section(DECLARE, 3)
    lines += ["Its `kind`:", "", "| kind | what the program gives |", "|---|---|"]
    lines += [f"| `{kind}` | {escaped(text)} |" for kind, text in KINDS.items()]
    lines += ["", "(spec-placeholders)=", "### Placeholders", ""]
    lines += ["Placeholders of a task, beside every param and factor by name:", ""]
    lines += ["| placeholder | its value |", "|---|---|"]
    lines += [f"| `{{{name}}}` | {escaped(text)} |" for name, text in TASK_PLACEHOLDERS.items()]
    return "\n".join(lines + [""])


def write_json_schema(folder) -> None:
    """The spec's JSON Schema as ``campaign schema`` prints it, for the page to link."""
    import json
    from pathlib import Path

    from campaign.spec.json_schema import FILE_NAME, json_schema

    path = Path(folder) / FILE_NAME
    text = json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


# ---------------------------------------------------------------------------------------
# The results file


SHOWN_ATTRIBUTES = 100  # characters of an attribute's value shown; longer ones are cut


def _type(dtype: str) -> str:
    """A variable's type as a reader of the file meets it: text, or the numpy type."""
    return "text" if dtype.lstrip("<>|=")[:1] in ("U", "S", "O") else dtype


def _attribute_text(value: object) -> str:
    text = value if isinstance(value, str) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_ATTRIBUTES else text[: SHOWN_ATTRIBUTES - 3] + "..."


def _described(attrs: dict) -> str:
    """A variable's attributes in words: its long name and [units] first, then the others."""
    others = {k: v for k, v in attrs.items() if k not in ("long_name", "units")}
    words = [_attribute_text(attrs.get("long_name", ""))]
    if attrs.get("units") not in (None, "", "1"):
        words[0] += f" [{attrs['units']}]"
    words += [f"{k}: {_attribute_text(v)}" for k, v in others.items()]
    return "; ".join(w for w in words if w)


def _variable_rows(variables: list[dict], seen: set[str], shown_summaries: str) -> list[str]:
    """One row per variable not shown yet; of the per-metric summaries, only those of the
    metric ``shown_summaries`` (the others repeat them for every metric)."""
    from campaign.results.names import SUMMARY_SUFFIXES

    rows = []
    for variable in sorted(variables, key=lambda v: not v["coordinate"]):
        name = variable["name"]
        owner = next((name[: -len(s)] for s in SUMMARY_SUFFIXES if name.endswith(s)), None)
        if name in seen or (owner not in (None, shown_summaries) and not variable["coordinate"]):
            continue
        seen.add(name)
        attrs = _described(variable["attrs"])
        dims = ", ".join(variable["dims"])
        role = " (coordinate)" if variable["coordinate"] else ""
        rows.append(f"| `{name}`{role} | {dims} | {_type(variable['dtype'])} | {escaped(attrs)} |")
    return rows


def results_markdown(described: dict) -> str:
    """Every group, variable and global attribute of the example campaigns' results files
    (`example_results.py`), the examples' specs first."""
    lines = []
    for name, example in described.items():
        lines += [f"The `{name}` example's spec:", "", "```yaml", example["spec"], "```", ""]
    groups: dict[str, list[str]] = {}
    seen: dict[str, set[str]] = {}
    for example in described.values():
        first_metric = example["file"]["/"]["variables"][0]["name"]
        for group, content in example["file"].items():
            rows = _variable_rows(content["variables"], seen.setdefault(group, set()), first_metric)
            groups.setdefault(group, []).extend(rows)
    for group, rows in groups.items():
        title = "The root group" if group == "/" else f"Group `{group}`"
        lines += [
            f"## {title}",
            "",
            "| variable | dimensions | type | meaning [units]; attributes |",
        ]
        lines += ["|---|---|---|---|", *rows, ""]
    lines += ["## Global attributes", "", "| attribute | in the `precision` example |", "|---|---|"]
    attributes = {}
    for example in described.values():
        attributes.update(example["file"]["/"]["attrs"])
    for key, value in attributes.items():
        lines.append(f"| `{key}` | {escaped(_attribute_text(value))} |")
    return "\n".join(lines + [""])
