"""The `campaign` command: its parser (each command group adds its own sub-parsers), the
commands models declare (``campaign workloads`` of the jobs model), and how a command ends:
an error in one line, Ctrl-C and SIGTERM as a clean stop, a closed stdout (``| head``) as a
quiet one."""

from __future__ import annotations

import _thread
import argparse
import contextlib
import faulthandler
import functools
import io
import os
import signal
import sys
import threading
import traceback

import campaign.cli.analyze as analyze
import campaign.cli.inspect as inspect
import campaign.cli.kept as kept
import campaign.cli.merge as merge
import campaign.cli.publish as publish
import campaign.cli.run as run
from campaign import api
from campaign.cli.arguments import EXIT_CLOSED_PIPE, EXIT_USAGE
from campaign.errors import (
    CampaignError,
    ParameterError,
    clear_stop_requests,
    request_stop,
)

COMMAND_GROUPS = {  # the order of `campaign --help`
    "validate": inspect,
    "plan": inspect,
    "run": run,
    "verify": run,
    "status": inspect,
    "merge": merge,
    "outputs": kept,
    "task": kept,
    "remetric": kept,
    "query": analyze,
    "plot": publish,
    "report": publish,
    "compare": analyze,
    "effects": analyze,
    "sensitivity": analyze,
    "select": analyze,
    "export": publish,
    "models": inspect,
    "schema": inspect,
}
BUILTIN_COMMANDS = tuple(COMMAND_GROUPS)
OPTIONS = {  # the option each library parameter is given by, for error messages
    "baseline": "--baseline",
    "by": "--by",
    "confidence": "--confidence",
    "factor": "--factor",
    "fmt": "--format",
    "keep_going=True": "--keep-going",
    "log": "--log",
    "metric": "--metric",
    "metrics": "--metric",
    "new=True": "--new",
    "on_change='accept'": "--accept-changed",
    "on_change='rerun'": "--rerun-changed",
    "output": "--out",
    "path": "-o",
    "rerun_unkept=True": "--rerun-unkept",
    "results": "results",  # positional arguments, said as the usage line names them
    "spec": "spec",
    "target": "target",
    "shard='I/N'": "--shard I/N",
    "where": "--where",
    "x": "--x",
}


class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line like every other error: what is wrong, and where the allowed
    options are listed (argparse would print the whole usage first)."""

    def error(self, message: str):
        self.exit(
            EXIT_USAGE, f"{self.prog}: error: {message}; `{self.prog} --help` lists the options\n"
        )


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="campaign",
        description="Run simulation campaigns of scheduling strategies on Dask; results as "
        "netCDF with confidence intervals.",
        epilog="Models add commands of their own (such as `campaign workloads`): "
        "`campaign models` lists them.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks on errors (anywhere on the line)"
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command, group in COMMAND_GROUPS.items():
        group.PARSERS[command](subparsers)  # each group's module adds its commands' parsers
    return parser


def model_command(argv: list[str]):
    """The model-declared command ``argv`` calls (``campaign workloads list``), or None."""
    if not argv or argv[0] in BUILTIN_COMMANDS:
        return None
    return api.model_command(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # --debug is the one option of every command: taken wherever it stands on the line
    debug = "--debug" in argv
    argv = [word for word in argv if word != "--debug"]
    command = model_command(argv)
    if command is not None:  # a model's own command takes the rest of the line as it is
        rest = argv[argv.index(command.name) + 1 :]
        return guarded(lambda: command.main(rest), debug)
    args = build_parser().parse_args(argv)
    args.debug = debug
    return guarded(lambda: args.func(args), debug, getattr(args, "option_names", {}))


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, a batch system's time limit): a stop like Ctrl-C, finished results
    kept and the cluster closed, rather than an end with nothing cleaned up."""


def _terminated(signum, frame) -> None:
    request_stop(Terminated)
    raise Terminated()


def _interrupted(signum, frame) -> None:
    request_stop(KeyboardInterrupt)
    raise KeyboardInterrupt()


def _stop_again(unraisable, hook) -> None:
    """A stop whose exception was raised where Python can only print it and go on (in a gc
    callback or a ``__del__``: "Exception ignored in ..."): delivered again to the main
    thread a moment later, outside that place, so that Ctrl-C or SIGTERM still stops the run
    (it ran on, the stop lost)."""
    stop = unraisable.exc_value
    if not isinstance(stop, KeyboardInterrupt):
        hook(unraisable)
        return
    signum = signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT
    again = threading.Timer(0.05, _thread.interrupt_main, (signum,))
    again.daemon = True
    again.start()


def guarded(call, debug: bool, option_names: dict[str, str] | None = None) -> int:
    """Run a command: a CampaignError is one line (a traceback too with --debug), naming
    options where the library named parameters; SIGTERM and Ctrl-C stop it cleanly."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    clear_stop_requests()
    earlier = signal.signal(signal.SIGTERM, _terminated) if in_main_thread else None
    # Ctrl-C remembered as well as raised (a host program's own handler is left alone)
    default_int = in_main_thread and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if default_int:
        signal.signal(signal.SIGINT, _interrupted)
    unraisable = sys.unraisablehook
    if in_main_thread:
        sys.unraisablehook = functools.partial(_stop_again, hook=unraisable)
    if in_main_thread:  # `kill -USR1 PID`: where each thread of a run that seems stuck is
        with contextlib.suppress(ValueError, io.UnsupportedOperation):  # stderr has no file
            faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)
    try:
        code = call()
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except BrokenPipeError:
        quiet_stdout()
        return EXIT_CLOSED_PIPE
    except CampaignError as error:
        if debug:
            traceback.print_exc()
        print(f"campaign: error: {in_options(error, option_names or {})}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, Terminated)
        print(
            f"campaign: {'stopped by SIGTERM' if terminated else 'interrupted'}; finished "
            "results are saved, run the same command again to finish the rest",
            file=sys.stderr,
        )
        return 143 if terminated else 130
    finally:
        clear_stop_requests()
        if default_int:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if in_main_thread:
            sys.unraisablehook = unraisable
        if in_main_thread and earlier is not None:
            signal.signal(signal.SIGTERM, earlier)


def quiet_stdout() -> None:
    """Point stdout at /dev/null: its reader is gone (``campaign outputs | head``), and what
    is still buffered would fail again in the interpreter's last flush."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def in_options(error: CampaignError, option_names: dict[str, str]) -> str:
    """The error's message, each parameter a `ParameterError` names said as the command's
    option: ``option_names`` (a command's own, such as ``query --rank`` for ``factor``), else
    `OPTIONS`, else ``--PARAMETER``."""
    if not isinstance(error, ParameterError):
        return str(error)
    options = {
        name: option_names.get(name) or OPTIONS.get(name) or f"--{name.replace('_', '-')}"
        for name in error.parameters
    }
    return error.named(options)


if __name__ == "__main__":
    sys.exit(main())
