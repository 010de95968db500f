"""The models there are: `models` (what ``campaign models`` prints) and the commands models
declare of their own (``campaign workloads``)."""

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
        With ``name``: the documentation tables (Markdown) instead of text.

    Returns
    -------
    str
        One line per model (its name, what it simulates, where it comes from; the check
        models the engine's tests use are not listed), or the model's params (allowed values,
        defaults, units), metrics (units, long names) and headline metrics, as
        ``campaign models [show NAME]`` prints them.
    """
    from campaign.errors import CampaignError
    from campaign.models.describe import list_models, show

    if name is None:
        return list_models()
    try:
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
