"""The Python API: every command as a function taking Python values, and one `Campaign`
handle (`open`) opened from a spec file, a dict or an output folder. The command line calls
these functions and prints what they return (`campaign.cli`); the `campaign` package names
them (`campaign.run`, ...). Each module holds one family of commands and imports what they
need when they run, so importing the API stays light.
"""

from campaign.api.analyses import compare, effects, query, rank, select, sensitivity
from campaign.api.catalog import model_command, models, schema
from campaign.api.files import export, plot, report
from campaign.api.handle import Campaign, open
from campaign.api.reading import open_breakdown, open_failures, open_results, open_samples
from campaign.api.running import as_spec, estimate, plan, run, status, validate
from campaign.api.stored import merge, outputs, remetric, task, verify
from campaign.api.tables import table
from campaign.errors import CampaignError

__all__ = [
    "Campaign",
    "CampaignError",
    "as_spec",
    "compare",
    "effects",
    "estimate",
    "export",
    "merge",
    "model_command",
    "models",
    "open",
    "open_breakdown",
    "open_failures",
    "open_results",
    "open_samples",
    "outputs",
    "plan",
    "plot",
    "query",
    "rank",
    "remetric",
    "report",
    "run",
    "schema",
    "select",
    "sensitivity",
    "status",
    "table",
    "task",
    "validate",
    "verify",
]
