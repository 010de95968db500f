"""How a figure looks in print: its size, its fonts, and the words on its axes.

Sizes are a journal's: ``column`` (3.5 in wide, one column of a two-column page), ``page``
(7.1 in, the full text width) or ``WxH`` in inches. The ``paper`` style sets fonts that stay
readable at that printed width (8 pt in a column, 9 pt across a page) and thin lines; the
``screen`` style is matplotlib's own. In every style a PDF or PostScript file embeds its
fonts as TrueType (Type 42), never as Type 3, which some submission systems refuse.

Labels come from what the model declares: a metric's long name and units, without the
formula a long name may carry ("mean bounded slowdown max(1, ...)" reads "Mean bounded
slowdown") unless asked, and no unit for a dimensionless metric (units "1").
"""

from __future__ import annotations

import re
import textwrap
from contextlib import contextmanager

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from campaign.errors import ParameterError

SIZES = {"column": 3.5, "page": 7.1}  # inches: the width of a column and of a page
STYLES = ("paper", "screen")
PANEL_ASPECT = 0.62  # a panel's height over its width
MAX_HEIGHT = 9.0  # inches: a page's text height, less a caption
MIN_ROW, MAX_ROW = 1.7, 3.0  # inches: the height of a row of panels
PAPER_RC = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "figure.titlesize": 8,
    "lines.linewidth": 1.0,
    "lines.markersize": 3.5,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "grid.linewidth": 0.4,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "axes.formatter.limits": (-3, 4),  # 120000 reads 1.2 with x10^5 over the axis
    "axes.formatter.use_mathtext": True,
}
PAGE_FONT = 9  # points: a page-wide figure is printed at the size it is drawn, as is a column

FILE_RC = {"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none"}
"""Every PDF and PostScript file of a figure: TrueType fonts (Type 42), never Type 3; SVG text
stays text. Set while a file is written (`FileCanvas`), never for the whole session."""

OPERATOR = re.compile(r"\s[-+*/=]\s")  # a spaced operator: the long name is a formula
CALL = re.compile(r"\s+[A-Za-z_]\w*\(")  # " max(": a formula follows the words
SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def figure_width(size: str | tuple[float, float]) -> tuple[float, float | None]:
    """(width, height or None: from the panels) in inches of ``column``, ``page``, ``WxH``
    or a (width, height) pair."""
    if isinstance(size, tuple | list) and len(size) == 2:
        width, height = (float(v) for v in size)
    elif isinstance(size, str) and size in SIZES:
        return SIZES[size], None
    else:
        match = re.fullmatch(r"\s*([0-9.]+)\s*[xX]\s*([0-9.]+)\s*", str(size))
        if not match:
            raise ParameterError(
                f"{{size}} {size!r} is not allowed; use column (3.5 in wide), page (7.1 in) "
                "or WxH in inches, such as 5x3",
                "size",
            )
        width, height = float(match.group(1)), float(match.group(2))
    if not (0.5 <= width <= 50 and 0.5 <= height <= 50):
        raise ParameterError(
            f"{{size}} {size!r}: width and height must be between 0.5 and 50 inches", "size"
        )
    return width, height


def figure_size(
    size: str | tuple[float, float], rows: int, columns: int, legend_right: bool
) -> tuple[float, float]:
    """The figure's (width, height) in inches for a grid of panels: a named size's height
    follows from its panels, each ``PANEL_ASPECT`` as high as it is wide."""
    width, height = figure_width(size)
    if height is None:
        panel = width * (0.8 if legend_right else 1.0) / columns
        row = min(max(panel * PANEL_ASPECT, MIN_ROW), MAX_ROW)
        below = 0.0 if legend_right else 0.4  # a legend under the panels
        height = min(MAX_HEIGHT, rows * row + 0.35 + below)
    return width, height


def check_style(style: str) -> str:
    if style not in STYLES:
        raise ParameterError(
            f"{{style}} {style!r} is not allowed; use {' or '.join(STYLES)}", "style"
        )
    return style


@contextmanager
def styled(style: str, width: float):
    """Draw in ``style``: the paper style's sizes, one point larger across a page."""
    check_style(style)
    if style == "screen":
        with matplotlib.rc_context({"axes.titlesize": 10, "axes.formatter.limits": (-3, 4)}):
            yield
        return
    rc = dict(PAPER_RC)
    if width >= 6:
        step = PAGE_FONT - rc["font.size"]
        for key in [k for k in rc if k.endswith("size") and k != "lines.markersize"]:
            rc[key] += step
    with matplotlib.rc_context(rc):
        yield


class FileCanvas(FigureCanvasAgg):
    """An Agg canvas whose files, whoever saves them, are written with `FILE_RC`."""

    def print_figure(self, *args, **kwargs):
        with matplotlib.rc_context(FILE_RC):
            return super().print_figure(*args, **kwargs)


def new_figure(figsize: tuple[float, float]) -> Figure:
    """A figure of ``figsize`` inches, its layout constrained, drawn without pyplot: a
    session's backend (a notebook's inline figures), its pyplot figures and its settings
    stay as they were."""
    figure = Figure(figsize=figsize, layout="constrained")
    FileCanvas(figure)
    return figure


def short_name(long_name: str, name: str) -> str:
    """A long name's words without its formula: a trailing "(...)" or a "max(...)" is cut; a
    long name that is a formula throughout ("executed work / (processors * makespan)") gives
    the metric's name in words."""
    text = long_name.strip() or name
    if OPERATOR.search(top_level(text)):
        return name.replace("_", " ")
    call = CALL.search(text)
    if call and call.start() > 0:
        text = text[: call.start()]
    while text.endswith(")") and " (" in text:
        text = text[: text.rindex(" (")].rstrip()
    return text.rstrip(" ,;:") or name.replace("_", " ")


def top_level(text: str) -> str:
    """``text`` without what lies within parentheses."""
    out, depth = [], 0
    for char in text:
        depth += char == "("
        if depth == 0:
            out.append(char)
        depth -= char == ")" and depth > 0
    return "".join(out)


def unit_text(units: str | None) -> str:
    """Units as a reader writes them: none for a dimensionless "1", ``proc*s^2`` as
    ``proc·s²``."""
    if not units or units.strip() == "1":
        return ""
    text = units.replace("*", "·")
    return re.sub(r"\^(-?\d+)", lambda m: m.group(1).translate(SUPERSCRIPTS), text)


def wrapped_title(text: str, width: float, points: float) -> str:
    """``text`` in lines that fit ``width`` inches at ``points`` (a character is about half
    as wide as the font is high)."""
    return textwrap.fill(text, max(20, int(width * 72 / (points * 0.55))))


def sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def metric_label(attrs: dict, name: str, formula: bool = False, prefix: str = "") -> str:
    """An axis label: the metric's long name (its formula only with ``formula``), after
    ``prefix`` ("difference in"), and its units in parentheses."""
    long_name = str(attrs.get("long_name", "")) or name
    words = long_name if formula else short_name(long_name, name)
    units = unit_text(attrs.get("units"))
    text = f"{prefix} {words}" if prefix else words
    return sentence(text) + (f" ({units})" if units else "")
