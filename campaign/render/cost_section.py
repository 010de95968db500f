"""The report's section on what the tasks cost: core-hours, peak memory, the slowest cells."""

from __future__ import annotations

from html import escape

import xarray as xr

from campaign.render.costs import seconds, size
from campaign.results.resource_group import table_costs

SHOWN_CELLS = 10


def cost_section(resources: xr.Dataset | None) -> str:
    """HTML: the finished tasks' wall time and peak memory in all and per cell (the slowest
    first), or nothing for a results file that does not hold them."""
    if resources is None or not resources.sizes.get("task"):
        return ""
    found = table_costs(resources)
    rows = "".join(
        f"<tr><td>{escape(cell.cell)}</td><td>{cell.tasks}</td>"
        f"<td>{escape(seconds(cell.mean_seconds))}</td><td>{escape(seconds(cell.max_seconds))}"
        f"</td><td>{escape(size(cell.peak_memory))}</td></tr>"
        for cell in found.cells[:SHOWN_CELLS]
    )
    more = len(found.cells) - SHOWN_CELLS
    note = f"<p>{more} faster cells are not shown.</p>" if more > 0 else ""
    return "\n".join(
        [
            '<h2 id="cost">What the tasks cost</h2>',
            f"<p>{found.tasks} finished tasks took {found.seconds / 3600:.3g} core-hours "
            f"(mean {escape(seconds(found.mean_seconds))} a task); the largest peak memory of "
            f"a worker process during a task was {escape(size(found.peak_memory))}. "
            "<code>campaign plan SPEC --estimate</code> sizes a batch cluster from them.</p>",
            "<table><thead><tr><th>cell</th><th>tasks</th><th>mean wall time</th>"
            "<th>longest</th><th>peak memory</th></tr></thead>",
            f"<tbody>{rows}</tbody></table>",
            note,
        ]
    )
