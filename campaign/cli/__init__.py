"""The `campaign` command: one module per command group; no work of its own."""

from campaign.cli.main import main

__all__ = ["main"]
