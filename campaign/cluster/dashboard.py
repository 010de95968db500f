"""Whether a scheduler serves Dask's live dashboard, so that `run` prints only a link that works.

A scheduler always runs an HTTP server, and `Client.dashboard_link` names its /status page
whatever is behind it; the live pages themselves are a bokeh application, which the scheduler
adds only when it can import bokeh (``distributed.versions.BOKEH_REQUIREMENT``) and was not
started with ``--no-dashboard``. Otherwise /status is a page asking for bokeh, or nothing.
So the scheduler itself is asked whether it carries that application.
"""

from __future__ import annotations

from typing import Any


def scheduler_dashboard(dask_scheduler: Any) -> tuple[bool, str | None]:
    """Run on the scheduler: whether it serves the bokeh dashboard, and the version of the
    bokeh it can import (None if none)."""
    try:
        import bokeh
        from bokeh.server.tornado import BokehTornado
    except ImportError:
        return False, None
    applications = getattr(dask_scheduler.http_application, "applications", [])
    return any(isinstance(app, BokehTornado) for app in applications), bokeh.__version__


def describe(link: str | None, served: bool, bokeh: str | None) -> str:
    """The dashboard part of the line `run` prints on connecting: the link, or why there is
    none and what would give one."""
    from distributed.versions import BOKEH_REQUIREMENT

    if served and link:
        return f"dashboard {link}"
    if not BOKEH_REQUIREMENT.specifier.contains(bokeh or "0", prereleases=True):
        has = f"bokeh {bokeh}" if bokeh else "no usable bokeh"
        return f"no dashboard (the scheduler has {has}; its live pages need {BOKEH_REQUIREMENT})"
    return "no dashboard (the scheduler serves none)"


def dashboard(client: Any) -> str:
    """Ask the client's scheduler about its dashboard and say it in a few words."""
    try:
        served, bokeh = client.run_on_scheduler(scheduler_dashboard)
        link = client.dashboard_link
    except Exception as error:  # a scheduler refusing to run code, or gone
        return f"no dashboard link (could not ask the scheduler: {error})"
    return describe(link, served, bokeh)
