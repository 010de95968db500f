"""Standardized regression coefficients of the point means on the sampled inputs: the
sensitivity summary any design of points supports (method ``regression``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from campaign.analysis.point_outputs import PointOutputs


def regression(
    outputs: PointOutputs, kept: np.ndarray, confidence: float
) -> tuple[pd.DataFrame, float]:
    """Standardized regression coefficients (the change of the output, in standard
    deviations, per standard deviation of one input, the others held) with Student-t
    intervals, and R^2, of the point means on the inputs (log(value) for a log scale)."""
    inputs = outputs.values[kept].copy()
    for j, log in enumerate(outputs.log):
        if log:
            inputs[:, j] = np.log(inputs[:, j])
    y = outputs.means[kept]
    n, k = inputs.shape
    z = (inputs - inputs.mean(axis=0)) / inputs.std(axis=0, ddof=1)
    zy = (y - y.mean()) / y.std(ddof=1)
    design = np.column_stack([np.ones(n), z])
    coefficients, *_ = np.linalg.lstsq(design, zy, rcond=None)
    residuals = zy - design @ coefficients
    dof = n - k - 1
    variance = residuals @ residuals / dof
    errors = np.sqrt(np.diag(np.linalg.inv(design.T @ design)) * variance)
    half = stats.t.ppf(0.5 + confidence / 2, dof) * errors
    r_squared = 1 - (residuals @ residuals) / (zy @ zy)
    table = pd.DataFrame({"factor": outputs.names, "SRC": coefficients[1:], "SRC_conf": half[1:]})
    return table, float(r_squared)
