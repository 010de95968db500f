"""How every table writes a number: one formatter per kind of number, shared by all commands.

Text outputs (aligned text, Markdown, LaTeX, HTML) round for a reader; CSV and JSON keep full
precision (`json_value`). A value that is missing (NaN) reads ``nan`` unless a cell says
otherwise (an interval without bounds is empty, a p-value without a test is empty).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float | np.floating) and np.isnan(value))


def number(value: float | None, digits: int = 6) -> str:
    """``digits`` significant digits, ``nan`` for none."""
    return "nan" if is_missing(value) else f"{value:.{digits}g}"


def fixed(value: float, decimals: int = 2) -> str:
    """``decimals`` digits after the point (percentages), ``nan`` for none."""
    return "nan" if is_missing(value) else f"{value:.{decimals}f}"


def signed(value: float, digits: int = 4) -> str:
    """An effect: its sign always written, ``digits`` significant digits."""
    return "nan" if is_missing(value) else f"{value:+.{digits}g}"


def mean_pm(mean: float, half: float) -> str:
    """``mean ± half-width`` (6 and 3 significant digits); the mean alone without interval."""
    if is_missing(mean):
        return "nan"
    return number(mean) if is_missing(half) else f"{number(mean)} ± {number(half, 3)}"


def bounds(low: float, high: float, digits: int = 6, missing: str = "") -> str:
    """``[low, high]``; ``missing`` when either bound is not there."""
    if is_missing(low) or is_missing(high):
        return missing
    return f"[{number(low, digits)}, {number(high, digits)}]"


def p_value(value: float) -> str:
    """A p-value with 3 significant digits, ``<1e-16`` below double precision; empty for none."""
    if is_missing(value):
        return ""
    return "<1e-16" if value < 1e-16 else f"{value:.3g}"


def count(value: float) -> str:
    """An integer count, ``-`` for none (an unranked level)."""
    return "-" if is_missing(value) else str(int(value))


def json_value(value: Any) -> Any:
    """Plain JSON: numpy scalars as Python numbers, NaN as null; full float precision."""
    if value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and np.isnan(value):
        return None
    return value
