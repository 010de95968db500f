"""Ticks a reader reads at a glance, in plain numbers.

- A numeric factor of few levels on the x axis is ticked at its levels (2, 4, 8; not 2.5, 5,
  7.5), each written as `campaign.render.numbers.level` writes it: an integer as an integer,
  any other number in the shortest general format (1e+08, 0.05). With many levels, or levels
  so close that their labels would overlap, matplotlib places the ticks (whole numbers only
  for an integer factor).
- A logarithmic axis is labelled in plain numbers (10, 20, 50, 100; 1e+06 from a million),
  never in matplotlib's powers (6×10¹): ticks at 1, 2 and 5 in each decade over up to
  `STEP_DECADES` decades, at the powers of ten (every few where their labels would not fit
  along the axis) over more, and at the digits or evenly spaced round numbers where the
  values lie within about a decade.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib import rcParams
from matplotlib.font_manager import FontProperties
from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    LogLocator,
    MaxNLocator,
    NullFormatter,
    NullLocator,
)

from campaign.render.numbers import level

LEVEL_TICKS = 8  # a numeric factor with at most this many levels is ticked at its levels
APART = 0.04  # ... unless two of them lie closer than this share of the axis
STEPS = (1.0, 2.0, 5.0)  # a log axis's ticks in each decade, over at most `STEP_DECADES`
STEP_DECADES = 3.0


def tick_text(value: float) -> str:
    """A computed tick (not a level) in general format, rounded to 6 significant digits."""
    return f"{value:.6g}"


def level_ticks(axis, levels, integer: bool) -> None:
    """The axis of a numeric factor (``integer``: its levels are whole numbers): ticks at the
    levels when few and apart, else placed by matplotlib; plain labels on a log axis."""
    names = {float(v): level(v) for v in levels if np.isfinite(float(v))}
    values = np.array(sorted(names), dtype=float)
    log = axis.get_scale() == "log"
    if apart(values, log):
        axis.set_major_locator(FixedLocator(values))
        axis.set_major_formatter(
            FuncFormatter(lambda value, _: names.get(float(value), tick_text(value)))
        )
        axis.set_minor_locator(NullLocator())
        axis.set_minor_formatter(NullFormatter())
    elif log:
        log_ticks(axis, values)
    elif integer:
        axis.set_major_locator(MaxNLocator(integer=True))


def apart(values: np.ndarray, log: bool) -> bool:
    """Whether ``values`` are few and far enough apart on the axis to tick each."""
    if not 1 <= values.size <= LEVEL_TICKS:
        return False
    if log:
        if values.min() <= 0:
            return False
        values = np.log10(values)
    if values.size == 1:
        return True
    gaps = np.diff(np.sort(values))
    return bool(gaps.min() >= APART * (values.max() - values.min()))


def log_ticks(axis, values) -> None:
    """A logarithmic axis over ``values`` (those drawn), labelled in plain numbers: the
    finest ticks whose labels fit along the axis (1, 2, 5 per decade; the powers of ten;
    every few powers), or, within about a decade, the digits or round numbers."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return
    low, high = values.min(), values.max()
    digits = tuple(float(d) for d in range(1, 10))
    choices = [STEPS] if math.log10(high / low) <= STEP_DECADES else []
    choices += [(1.0,)] if len(candidates(low, high, (1.0,))) >= 2 else [digits]
    for subs in choices:
        ticks = candidates(low, high, subs)
        if len(ticks) >= 2 and fits(axis, ticks):
            axis.set_major_locator(LogLocator(base=10, subs=subs))
            break
    else:
        if len(candidates(low, high, (1.0,))) >= 2:  # every few powers of ten
            axis.set_major_locator(LogLocator(base=10, subs=(1.0,), numticks=room(axis)))
        else:
            ticks = MaxNLocator(nbins=3, steps=[1, 2, 2.5, 5, 10]).tick_values(low, high)
            axis.set_major_locator(FixedLocator(ticks[ticks > 0]))
    axis.set_major_formatter(FuncFormatter(lambda value, _: tick_text(value)))
    axis.set_minor_formatter(NullFormatter())


def label_points(axis) -> float:
    """The size of the axis's tick labels, in points."""
    return FontProperties(size=rcParams[f"{axis.axis_name}tick.labelsize"]).get_size_in_points()


def length(axis) -> float:
    """The axis's length in inches (before the layout adjusts it: about)."""
    box = axis.axes.get_position()
    width, height = axis.axes.figure.get_size_inches()
    return box.width * width if axis.axis_name == "x" else box.height * height


def fits(axis, ticks) -> bool:
    """Whether labels of ``ticks`` fit along the axis without touching: side by side on x
    (a character about 0.6 of the font high, a font's height between), stacked on y."""
    points = label_points(axis)
    if axis.axis_name == "x":
        needed = sum(len(tick_text(t)) * 0.6 * points + points for t in ticks)
    else:
        needed = len(ticks) * points * 1.8
    return needed / 72 <= length(axis)


def room(axis) -> int:
    """How many labels of powers of ten fit along the axis (at least 2)."""
    points = label_points(axis)
    each = (6 * 0.6 * points + points) if axis.axis_name == "x" else points * 1.8
    return max(2, int(length(axis) * 72 / each))


def candidates(low: float, high: float, subs) -> list[float]:
    """The ticks ``subs`` × 10^k that lie within [low, high]."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    ticks = [s * 10.0**k for k in range(first, last + 1) for s in subs]
    return [t for t in ticks if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]
