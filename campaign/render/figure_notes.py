"""What a figure's panels say about their numbers, for its title: the replicates behind
them, the interval's method, the points without values and the numbers at +-inf, which no
axis can draw (a mean wait of jobs that never start) and which a figure would otherwise leave
out without a word while `query` shows them."""

from __future__ import annotations

from typing import Any

import numpy as np

from campaign.analysis.stats import percent
from campaign.render.figure_layout import Layout
from campaign.render.numbers import level as level_text


class Notes:
    """What the panels say about their numbers, for the figure's title."""

    def __init__(self) -> None:
        self.counts: list[int] = []
        self.method = ""
        self.bins: list[str] = []  # factors along point cut into bins, in words
        self.infinite = {"point": [0, 0], "value": [0, 0]}  # at +inf and at -inf

    def add_infinite(self, arrays, what: str = "value") -> None:
        """Count the +-inf among the numbers of a panel (``what``: means or differences are
        points, replicates are values): no axis can draw them, so the title says so."""
        for values in arrays:
            values = np.asarray(values, dtype=float)
            self.infinite[what][0] += int(np.count_nonzero(values == np.inf))
            self.infinite[what][1] += int(np.count_nonzero(values == -np.inf))

    def not_drawn(self) -> str:
        """``; 1 point at +inf not drawn``, or nothing when every number is finite."""
        parts = [
            f"{count} {what}{'s' * (count > 1)} at {sign}inf"
            for what, (high, low) in self.infinite.items()
            for count, sign in ((high, "+"), (low, "-"))
            if count
        ]
        return f"; {', '.join(parts)} not drawn" if parts else ""

    def add(self, counts) -> None:
        self.counts += [int(c) for c in np.ravel(counts) if np.isfinite(c)]

    def replicates(self) -> str:
        drawn = [count for count in self.counts if count > 0] or [0]
        low, high = min(drawn), max(drawn)
        if not high:
            return "no replicates"
        return f"{low} replicates" if low == high else f"{low} to {high} replicates"

    def title(self, layout: Layout, baseline: Any, confidence: float) -> str:
        level = percent(confidence)
        what = {
            "mean": f"Mean and {level} interval over {self.replicates()}",
            "difference": f"Difference from {layout.by} = {level_text(baseline)}, "
            f"{self.method} {level} interval over {self.replicates()}",
            "box": f"{self.replicates().capitalize()}: median, quartiles, 1.5 IQR whiskers",
            "violin": f"Distribution and median of {self.replicates()}",
            "ecdf": f"Empirical distribution of {self.replicates()}",
        }[layout.kind]
        if layout.chosen_facet and layout.facet in layout.wide:
            what += (
                f"; a panel per {layout.facet} (levels {layout.wide[layout.facet]}: too far "
                "apart to average)"
            )
        if layout.pooled:
            each = "" if layout.kind in ("mean", "difference") else "each replicate's "
            over = [
                f"{f} (levels {layout.wide[f]})" if f in layout.wide else f for f in layout.pooled
            ]
            what += f"; {each}mean over {' and '.join(over)}"
        if self.bins:
            what += f" ({'; '.join(self.bins)})"
        empty = self.counts.count(0)  # points without a value: no panel shows them
        if empty:
            what += f"; {empty} point{'s' * (empty > 1)} without values not drawn"
        return what + self.not_drawn()
