"""The one exception type whose message is shown to users as a single line."""


class CampaignError(Exception):
    """A problem the user can fix: bad spec, bad option, incompatible stored results."""


class BadValue(CampaignError):
    """A value of one parameter the results do not allow (an unknown metric or factor).

    The message names the Python parameter; ``parameter``, ``value`` and ``problem`` let a
    front end say the same with its own name for it (the CLI: its option)."""

    def __init__(self, parameter: str, value: object, problem: str):
        super().__init__(f"{parameter} {value!r} {problem}")
        self.parameter, self.value, self.problem = parameter, value, problem
