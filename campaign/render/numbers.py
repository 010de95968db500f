"""How every table writes a number: one formatter per kind of number, shared by all commands.

Text outputs (aligned text, Markdown, LaTeX, HTML) round for a reader; CSV and JSON keep full
precision (`json_value`). A value that is missing (NaN) reads ``nan`` unless a cell says
otherwise (an interval without bounds is empty, a p-value without a test is empty).
"""

from __future__ import annotations

import math
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


def resolving(value: float, half: float, digits: int, half_digits: int) -> int:
    """Significant digits that write ``value`` down to the place of the last of
    ``half_digits`` significant digits of an interval's half-width ``half``, and at least
    ``digits``: a mean of 31234493.1 ± 4.3 is 31234493.11, not 3.12345e+07, which would
    hide a difference of 45 from a mean of 31234538.6."""
    if is_missing(value) or is_missing(half) or half <= 0 or value == 0:
        return digits
    if not (math.isfinite(value) and math.isfinite(half)):
        return digits
    place = half_width_place(half, half_digits)
    return min(17, max(digits, math.floor(math.log10(abs(value))) - place + 1))


def half_width_place(half: float, half_digits: int) -> int:
    """The decimal place (a power of 10) of the last of ``half_digits`` significant digits of
    a positive, finite half-width: -4 for 0.00128 to 2 digits (0.0013)."""
    return math.floor(math.log10(half)) - (half_digits - 1)


def mean_pm(mean: float, half: float) -> str:
    """``mean ± half-width``: the half-width to 3 significant digits, the mean to at least 6
    and down to the half-width's last digit; the mean alone without interval."""
    if is_missing(mean):
        return "nan"
    if is_missing(half):
        return number(mean)
    return f"{number(mean, resolving(mean, half, 6, 3))} ± {number(half, 3)}"


SCIENTIFIC_ABOVE, SCIENTIFIC_BELOW = 1e6, 1e-3  # magnitudes written with a power of 10
SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
HALF_DIGITS = 2  # significant digits of an interval's half-width


def estimate(mean: float, half: float, digits: int | None = None) -> str:
    """``mean ± half`` for a paper: the half-width to 2 significant digits and the mean to the
    same decimal place (the interval says how many of its digits mean something), or the mean
    to ``digits`` significant digits and the half-width to its place. Magnitudes of a million
    or more, or below 0.001, share a power of ten: ``(3.14 ± 0.17)×10⁶``. Without an interval,
    the mean alone to ``digits`` (default 4) significant digits (`plain`)."""
    if is_missing(mean):
        return "nan"
    if is_missing(half) or half < 0 or not math.isfinite(half):
        return plain(mean, digits or 4)
    if half == 0:  # no variation: exact to the digits shown
        return f"{plain(mean, digits or 4)} ± 0"
    scale = max(abs(mean), half)
    big_or_small = scale >= SCIENTIFIC_ABOVE or scale < SCIENTIFIC_BELOW
    exponent = math.floor(math.log10(scale)) if big_or_small else 0
    m, h = mean / 10**exponent, half / 10**exponent
    if digits is None or m == 0:
        place = math.floor(math.log10(h)) - (HALF_DIGITS - 1)
    else:
        place = math.floor(math.log10(abs(m))) - (digits - 1)
    decimals = max(0, -place)
    m, h = round(m, -place) + 0.0, round(h, -place)  # + 0.0: no "-0"
    text = f"{m:.{decimals}f} ± {h:.{decimals}f}"
    return f"({text})×10{str(exponent).translate(SUPERSCRIPTS)}" if exponent else text


def plain(value: float, digits: int = 4) -> str:
    """A number without an interval for a paper: at least ``digits`` significant digits in
    fixed notation (every digit of a whole part: 58815, not 5.882e+04), a power of ten as
    `estimate` writes it for a million or more or below 0.001."""
    if is_missing(value):
        return "nan"
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    exponent = math.floor(math.log10(abs(value)))
    if abs(value) >= SCIENTIFIC_ABOVE or abs(value) < SCIENTIFIC_BELOW:
        mantissa = f"{value / 10**exponent:.{digits - 1}f}"
        return f"{mantissa}×10{str(exponent).translate(SUPERSCRIPTS)}"
    return f"{value:.{max(0, digits - 1 - exponent)}f}"


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
    """Plain JSON: numpy scalars as Python numbers, NaN as null; full float precision. JSON
    has no number for an infinite value (a bare ``Infinity`` is no JSON: JavaScript refuses
    it, jq reads 1.8e308): +-inf is the string ``"Infinity"`` or ``"-Infinity"``, which
    every parser takes and pandas, JavaScript's ``Number()`` and Python's ``float()`` read
    as the number."""
    if value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, float) and np.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def level(value: Any) -> str:
    """A factor's level as a figure writes it: an integer as an integer (8, not 8.0), any
    other number in the shortest general format that gives it back (1e+08, 2.5, 0.05,
    123456789), anything else as written."""
    if isinstance(value, bool | np.bool_ | str):
        return str(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        value = float(value)
        if not math.isfinite(value):
            return str(value)
        for digits in range(6, 18):
            text = f"{value:.{digits}g}"
            if float(text) == value:
                return text
    return str(value)
