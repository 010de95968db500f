"""Whether a results file can give second-order Sobol indices, judged from two of its
attributes (its design, and whether a Saltelli design drew the points pairs need), so that
`campaign sensitivity --second-order` is refused before the indices are computed."""

from __future__ import annotations

from collections.abc import Mapping

from campaign.analysis.sensitivity import DEFAULT_METHOD, SOBOL
from campaign.design import points as designs

ATTRIBUTES = ("design", "design_second_order")  # what `second_order_refusal` reads


def second_order_refusal(attrs: Mapping[str, object], method: str | None) -> str | None:
    """Why the design in ``attrs`` and ``method`` (None: the design's default) give no
    second-order indices, in one line; None when they do, or when the analysis itself refuses
    them first (no design of points, a method the design cannot take)."""
    design = str(attrs.get("design", designs.FULL))
    if design not in DEFAULT_METHOD or (method and method != SOBOL):
        return None
    used = method or DEFAULT_METHOD[design]
    if used != SOBOL:
        return (
            "--second-order is for --method sobol (the Sobol indices of pairs of factors, on a "
            f"saltelli design drawn with second_order: true); these results are of a {design} "
            f"design, analysed by {used}: leave --second-order out"
        )
    if design == designs.SALTELLI and str(attrs.get("design_second_order")) != "true":
        return (
            "--second-order needs a saltelli design drawn with second_order: true (the points "
            "the pairs' indices need); these results' design was drawn with second_order: "
            "false: leave --second-order out, or run the campaign with second_order: true"
        )
    return None
