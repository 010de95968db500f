"""The one exception type whose message is shown to users as a single line."""


class CampaignError(Exception):
    """A problem the user can fix: bad spec, bad option, incompatible stored results."""


class ParameterError(CampaignError):
    """A bad argument of a library call. The message names each parameter as ``{name}``: read
    from Python it shows the parameter's name (``where 'q=1': ...``), and a command line shows
    its own option instead (`named`)."""

    def __init__(self, template: str, *parameters: str):
        self.template, self.parameters = template, parameters
        super().__init__(self.named({}))

    def named(self, options: dict[str, str]) -> str:
        """The message with each parameter called what ``options`` calls it (else its name)."""
        text = self.template
        for name in self.parameters:
            text = text.replace("{" + name + "}", options.get(name, name))
        return text


class BadValue(ParameterError):
    """A value of one parameter the results do not allow (an unknown metric or factor): the
    message is ``{parameter} value problem``; ``parameter``, ``value`` and ``problem`` are kept
    for a front end that says it its own way."""

    def __init__(self, parameter: str, value: object, problem: str):
        super().__init__(f"{{{parameter}}} {value!r} {problem}", parameter)
        self.parameter, self.value, self.problem = parameter, value, problem


_requested_stops: list[type[KeyboardInterrupt]] = []


def request_stop(stop: type[KeyboardInterrupt]) -> None:
    """Remember a Ctrl-C or SIGTERM this process received (its signal handler calls this
    before raising the exception): the exception can be swallowed on its way (raised in a
    gc callback or a library's handler), the request cannot."""
    _requested_stops.append(stop)


def clear_stop_requests() -> None:
    _requested_stops.clear()


def raise_requested_stop() -> None:
    """Raise the stop this process was asked for, if any: loops that run long call it, so
    that a stop whose exception was swallowed still ends them."""
    if _requested_stops:
        raise _requested_stops[0]()
