"""campaign: simulation campaigns of scheduling strategies on Dask, results as xarray/netCDF.

Every command is a function here, taking Python values (a spec as a dict, levels as a
mapping, metrics as a list) and returning data (an xarray Dataset, a pandas DataFrame, a
matplotlib Figure) or the files it wrote; errors name the function's parameters. A
`Campaign` (`campaign.open`) is one campaign, opened from a spec file, a dict or an output
folder, with each command as a method::

    import campaign
    results = campaign.run("specs/demo.yaml")          # or a dict, or an output folder
    table = campaign.query(results, by=["scheduler"], where={"load": 1.5})
    print(campaign.table(table, "markdown"))
    figure = campaign.plot(results, "mean_wait", kind="difference", baseline="fcfs")
    demo = campaign.open("outputs/demo")               # status(), verify(), outputs(), ...

docs/python-api.md walks through them. In a script that runs a campaign on the embedded
cluster, call `run` under ``if __name__ == "__main__":`` (its worker processes import the
script); reading results needs no guard.

The functions live in `campaign.api` (the command line calls them too); this package only
names them, each imported on first use, so that ``import campaign`` stays light.
"""

from __future__ import annotations

import sys

from campaign.api.names import Package, exported
from campaign.errors import CampaignError

__version__ = "0.1.0"

__all__ = [
    "Campaign",
    "open",
    "run",
    "validate",
    "plan",
    "status",
    "estimate",
    "verify",
    "merge",
    "remetric",
    "outputs",
    "task",
    "open_results",
    "open_failures",
    "open_samples",
    "open_breakdown",
    "query",
    "rank",
    "compare",
    "effects",
    "sensitivity",
    "select",
    "table",
    "plot",
    "report",
    "export",
    "models",
    "schema",
    "as_spec",
    "CampaignError",
    "__version__",
]


def __getattr__(name: str):
    """The API's object ``name``, imported on first use and kept."""
    if name not in __all__:
        raise AttributeError(f"module 'campaign' has no attribute {name!r}")
    value = globals()[name] = exported(name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


sys.modules[__name__].__class__ = Package  # campaign.plan and campaign.models stay functions
