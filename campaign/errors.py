"""The one exception type whose message is shown to users as a single line."""


class CampaignError(Exception):
    """A problem the user can fix: bad spec, bad option, incompatible stored results."""
