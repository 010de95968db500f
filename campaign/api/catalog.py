"""What a spec may name: `models` (what ``campaign models`` prints), the commands models
declare of their own (``campaign workloads``), and `schema`, the JSON Schema of a spec file."""

from __future__ import annotations

import campaign.api.checks as check
from campaign.api.checks import checked


@checked(markdown=check.flag)
def models(name=None, markdown=False):
    """The models, or one model's declaration.

    Parameters
    ----------
    name : str, optional
        A model's name: its declaration instead of the list.
    markdown : bool
        With ``name``: the documentation tables (Markdown) instead of text (refused
        without ``name``).

    Returns
    -------
    str
        One line per model (its name, what it simulates, where it comes from; the check
        models the engine's tests use are not listed), or the model's params (allowed values,
        defaults, units), metrics (units, long names) and headline metrics, as
        ``campaign models [show NAME]`` prints them.
    """
    from campaign.errors import CampaignError, ParameterError
    from campaign.models.describe import list_models, show
    from campaign.plan.model_code import current_model

    if name is None:
        if markdown:  # the list has no documentation tables
            raise ParameterError(
                "{markdown} gives one model's documentation tables: give {name} too",
                "markdown",
                "name",
            )
        return list_models()
    try:
        current_model(name)  # its files as they are now: one edited in this session shows
        return show(name, markdown=markdown)
    except ValueError as error:
        raise CampaignError(str(error)) from None


def model_command(argv: list[str]):
    """The command a model declares that a command line calls (``campaign workloads list``:
    the first word), or None."""
    from campaign.models import find_command

    if not argv or argv[0].startswith("-"):
        return None
    found = find_command(argv[0])
    return None if found is None else found[1]


@checked()
def schema(out=None):
    """The JSON Schema of a spec file, for editors (the YAML language server checks and
    completes a spec with it).

    Parameters
    ----------
    out : str or pathlib.Path, optional
        A file to write it to.

    Returns
    -------
    str or pathlib.Path
        The schema as JSON text; with ``out``, the file written.
    """
    import json
    from pathlib import Path

    from campaign.errors import ParameterError
    from campaign.spec.json_schema import json_schema

    text = json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
    if out is None:
        return text
    path = Path(out).expanduser()
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise ParameterError(f"{{out}} {out}: cannot write it: {error.strerror}", "out") from None
    return path
