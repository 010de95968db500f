"""What the intervals of a CSV or JSON table are, in the table itself.

The aligned text and the paper formats say it in a line above or below the table; CSV and JSON
carry numbers only, so a table passed on alone would lose whether ``*_half_width`` is a 90 %
or a 95 % interval, and how it was made. Every row of such a table with intervals ends with
two columns that say it: ``ci_level`` (the confidence level, such as 0.95) and ``ci_method``
(how the intervals were made, in words). The other columns keep their names and order.
"""

from __future__ import annotations

import pandas as pd

LEVEL, METHOD = "ci_level", "ci_method"

REPLICATES = "Student t over replicates"
PAIRED_REPLICATES = "Student t over paired replicates"
PAIRED_DIFFERENCES = "Student t over paired differences; ratio: delta method"
WELCH = "Welch; ratio: delta method"
REGRESSION = "Student t of the regression"
COMPLETE_REPLICATES = "Student t over complete replicates"  # a fraction's main effects


def bootstrap(resamples: int) -> str:
    """A SALib method's intervals: z times the standard deviation of bootstrap resamples."""
    return f"bootstrap, {resamples} resamples (normal)"


def with_interval(frame: pd.DataFrame, confidence: float, method: str) -> pd.DataFrame:
    """``frame`` with the `LEVEL` and `METHOD` columns last, the same in every row."""
    return frame.assign(**{LEVEL: float(confidence), METHOD: method})
