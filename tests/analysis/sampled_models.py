"""Models with known sensitivities, for the tests of `campaign sensitivity` (named in specs as
``sampled_models:ishigami`` and ``sampled_models:linear``; this folder on the path)."""

from __future__ import annotations

import math

import numpy as np


def ishigami(params, seed):
    """Ishigami and Homma's function (a = 7, b = 0.1) of x1, x2, x3 on [-pi, pi]; ``noise``:
    the standard deviation of a normal noise drawn from the seed; it fails (ValueError) where
    x1 > ``fail_above``."""
    x1, x2, x3 = params["x1"], params["x2"], params["x3"]
    if x1 > params.get("fail_above", math.inf):
        raise ValueError(f"x1 = {x1} is above {params['fail_above']}")
    exact = math.sin(x1) + 7 * math.sin(x2) ** 2 + 0.1 * x3**4 * math.sin(x1)
    noise = params.get("noise", 0.0) * np.random.default_rng(seed).standard_normal()
    return {"y": exact + noise}


COEFFICIENTS = {"a": 3.0, "b": -2.0, "c": 0.0, "k": 0.5}


def linear(params, seed):
    """y = 3 a - 2 b + 0 c + 0.5 ln k + normal noise of standard deviation ``noise``; ``one``
    is 1 whatever the inputs; ``ey`` is exp(y), positive, whose log is y; ``capped`` is y, or
    +inf where a > 0.9 (a run that never ends)."""
    noise = params.get("noise", 0.0) * np.random.default_rng(seed).standard_normal()
    exact = 3.0 * params["a"] - 2.0 * params["b"] + 0.5 * math.log(params["k"])
    capped = math.inf if params["a"] > 0.9 else exact + noise
    return {"y": exact + noise, "one": 1.0, "ey": math.exp(exact + noise), "capped": capped}


def ishigami_indices(a: float = 7.0, b: float = 0.1) -> dict[str, tuple[float, float]]:
    """The analytical first-order and total indices (S1, ST) of each input."""
    v1 = 0.5 * (1 + b * math.pi**4 / 5) ** 2
    v2 = a**2 / 8
    v13 = b**2 * math.pi**8 * (1 / 18 - 1 / 50)
    total = v1 + v2 + v13
    return {"x1": (v1 / total, (v1 + v13) / total), "x2": (v2 / total, v2 / total),
            "x3": (0.0, v13 / total)}  # fmt: skip
