"""Which cells of the factors a campaign runs: the full factorial, a regular two-level
fraction, or points over numeric ranges: a Latin hypercube, a Sobol sequence, Saltelli's
sample for Sobol indices or Morris trajectories (both drawn by SALib).

Plain data in, plain data out: this module knows factor names, levels and seeds, never a
spec or a results file. `campaign.spec.load` parses the ``design:`` key into a `DesignSpec`;
`campaign.design.tasks` turns its runs into tasks.

A fraction 2^(k-p) runs the full factorial of its k - p base factors and sets each
generated factor to a signed product of base factors (``d: a*b*c``), so its defining
relation is the group of words the generators span (I = abcd) and each effect is aliased
with its products by those words.

Latin hypercube and Sobol points are drawn in the unit cube from the campaign seed and
scaled to each range. Adding points keeps the stored ones: a Sobol design of n points is
the first n points of one scrambled sequence; a Latin hypercube's ``points`` may list
growing sizes, each a multiple of the one before, and each size keeps the points of the
one before and adds points in the strata they leave empty, so every size is a Latin
hypercube of its own (one point per stratum of every factor).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

FULL, FRACTIONAL, LATIN_HYPERCUBE, SOBOL = "full", "fractional", "latin_hypercube", "sobol"
SALTELLI, MORRIS = "saltelli", "morris"
KINDS = (FULL, FRACTIONAL, LATIN_HYPERCUBE, SOBOL, SALTELLI, MORRIS)
POINT_KINDS = (LATIN_HYPERCUBE, SOBOL, SALTELLI, MORRIS)
LINEAR, LOG = "linear", "log"
SCALES = (LINEAR, LOG)
POINT = "point"  # the results dimension of a design that is not a full factorial
MAX_POINTS = 1_000_000
# spawn key of the unit-cube points: two words, so it is never a task's key (1 + 2m words)
POINTS_KEY = (0x64657369, 0x676E0000)

# Standard fractions (Montgomery, Design and Analysis of Experiments, table of selected
# 2^(k-p) designs; Box, Hunter and Hunter): per number of factors k, the smallest fraction
# of each resolution, as generators over the factors in order (a = first factor, ...).
# `standard_fraction` picks the smallest whose resolution is at least the one asked for.
STANDARD = {
    3: {3: "c=ab"},
    4: {4: "d=abc"},
    5: {3: "d=ab e=ac", 5: "e=abcd"},
    6: {3: "d=ab e=ac f=bc", 4: "e=abc f=bcd", 6: "f=abcde"},
    7: {3: "d=ab e=ac f=bc g=abc", 4: "e=abc f=bcd g=acd", 7: "g=abcdef"},
    8: {4: "e=bcd f=acd g=abc h=abd", 5: "g=abcd h=abef"},
    9: {
        3: "e=abc f=bcd g=acd h=abd j=abcd",
        4: "f=bcde g=acde h=abde j=abce",
        6: "h=acdfg j=bcefg",
    },
    10: {
        3: "e=abc f=bcd g=acd h=abd j=abcd k=ab",
        4: "f=abcd g=abce h=abde j=acde k=bcde",
        5: "h=abcg j=bcde k=acdf",
    },
    11: {
        3: "e=abc f=bcd g=acd h=abd j=abcd k=ab l=ac",
        4: "f=abc g=bcd h=cde j=acd k=ade l=bde",
        5: "h=abcg j=bcde k=acdf l=abcdefg",
    },
}
LETTERS = "abcdefghjklmnopqrstuvwxyz"  # the textbooks skip i (it reads as the identity I)


class DesignError(ValueError):
    """A design that cannot be built; the message is one line for the user."""


@dataclass(frozen=True)
class Generator:
    """Generated factor ``factor`` (an index) = ``sign`` x the product of the base factors in
    ``word`` (a bit mask over factor indices)."""

    factor: int
    sign: int
    word: int


@dataclass(frozen=True)
class Fraction:
    """A regular two-level fraction over ``names`` (every factor, in spec order)."""

    names: tuple[str, ...]
    generators: tuple[Generator, ...]

    @property
    def base(self) -> list[int]:
        generated = {g.factor for g in self.generators}
        return [i for i in range(len(self.names)) if i not in generated]

    @property
    def runs(self) -> np.ndarray:
        """Level index (0 low, 1 high) of every factor in every run: 2^(k-p) x k, the base
        factors in the full factorial's order (last base factor fastest)."""
        base = self.base
        signs = np.ones((2 ** len(base), len(self.names)), dtype=np.int64)
        for row, combination in enumerate(itertools.product((-1, 1), repeat=len(base))):
            signs[row, base] = combination
        for generator in self.generators:
            column = np.full(len(signs), generator.sign, dtype=np.int64)
            for i in bits(generator.word):
                column = column * signs[:, i]
            signs[:, generator.factor] = column
        return (signs > 0).astype(np.int64)

    @property
    def relation(self) -> list[tuple[int, int]]:
        """The words of the defining relation but I: (sign, mask), shortest first."""
        words = [(g.sign, g.word | (1 << g.factor)) for g in self.generators]
        spanned = []
        for chosen in itertools.product((False, True), repeat=len(words)):
            if not any(chosen):
                continue
            sign, mask = 1, 0
            for use, (s, m) in zip(chosen, words):
                if use:
                    sign, mask = sign * s, mask ^ m
            spanned.append((sign, mask))
        return sorted(spanned, key=lambda word: (bin(word[1]).count("1"), self._order(word[1])))

    @property
    def resolution(self) -> int | None:
        """The length of the shortest word of the defining relation (None: the full
        factorial, nothing aliased)."""
        relation = self.relation
        return min(bin(mask).count("1") for _, mask in relation) if relation else None

    def aliases(self) -> dict[int, list[tuple[int, int]]]:
        """Per main effect and two-factor interaction (a mask), the main effects and
        two-factor interactions it is aliased with, as (sign, mask)."""
        relation = self.relation
        effects = [1 << i for i in range(len(self.names))]
        effects += [
            (1 << i) | (1 << j) for i, j in itertools.combinations(range(len(self.names)), 2)
        ]
        chains = {}
        for effect in effects:
            chain = [(s, effect ^ m) for s, m in relation if bin(effect ^ m).count("1") <= 2]
            chains[effect] = sorted(chain, key=lambda w: (bin(w[1]).count("1"), self._order(w[1])))
        return chains

    def alias_lines(self) -> list[str]:
        """The alias chains up to two-factor interactions, one line each: every main effect,
        then the two-factor interactions aliased with each other only."""
        lines, seen = [], set()
        for effect, chain in self.aliases().items():
            if effect in seen or not chain:
                continue
            if bin(effect).count("1") == 2 and any(bin(m).count("1") == 1 for _, m in chain):
                continue  # already on its main effect's line
            seen.update(m for _, m in chain)
            words = [self.word(1, effect)] + [self.word(s, m) for s, m in chain]
            lines.append(" = ".join(words))
        return lines

    def relation_text(self) -> str:
        return " = ".join(["I", *(self.word(s, m) for s, m in self.relation)])

    def generator_text(self) -> str:
        return ", ".join(
            f"{self.names[g.factor]} = {self.word(g.sign, g.word)}" for g in self.generators
        )

    def word(self, sign: int, mask: int) -> str:
        """A word in the factors' names: ``abd`` for one-letter names, else ``a*b*d``."""
        names = [self.names[i] for i in bits(mask)]
        joined = ("" if all(len(n) == 1 for n in self.names) else "*").join(names)
        return ("-" if sign < 0 else "") + joined

    @property
    def title(self) -> str:
        k, p = len(self.names), len(self.generators)
        roman = {3: "III", 4: "IV", 5: "V", 6: "VI", 7: "VII", 8: "VIII"}
        resolution = self.resolution
        what = f"resolution {roman.get(resolution, resolution)}" if resolution else "full"
        return f"2^({k}-{p}) fraction, {2 ** (k - p)} runs, {what}"

    def _order(self, mask: int) -> list[int]:
        return list(bits(mask))


def bits(mask: int) -> list[int]:
    """The indices of the set bits of ``mask``, lowest first."""
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def parse_generators(raw: Mapping, names: Sequence[str]) -> Fraction:
    """A fraction from generators written as ``{d: a*b*c, e: -a*b}``; one-line errors."""
    if not isinstance(raw, Mapping) or not raw:
        raise DesignError("expected a mapping generated factor: product of factors (d: a*b*c)")
    index = {name: i for i, name in enumerate(names)}
    generated = set()
    for name in raw:
        if name not in index:
            raise DesignError(f"{name!r} is not a factor; factors: {', '.join(names)}")
        generated.add(index[name])
    generators = []
    for name, text in raw.items():
        if not isinstance(text, str) or not text.strip():
            raise DesignError(f"{name}: expected a product of factors such as a*b*c, got {text!r}")
        sign, body = 1, text.strip()
        if body[0] in "+-":
            sign, body = (-1 if body[0] == "-" else 1), body[1:].strip()
        word = 0
        for part in body.split("*"):
            part = part.strip()
            if part not in index:
                raise DesignError(
                    f"{name}: {part!r} in {text!r} is not a factor; factors: {', '.join(names)}"
                )
            if index[part] in generated:
                raise DesignError(
                    f"{name}: {part!r} is itself generated; write every generator as a "
                    "product of the factors that are not"
                )
            if word >> index[part] & 1:
                raise DesignError(f"{name}: {part!r} appears twice in {text!r}")
            word |= 1 << index[part]
        generators.append(Generator(index[name], sign, word))
    fraction = Fraction(tuple(names), tuple(generators))
    for sign, mask in fraction.relation:
        if bin(mask).count("1") <= 2:  # a word is never shorter than 2: d = a gives I = ad
            first, second = (names[i] for i in bits(mask))
            raise DesignError(
                f"these generators alias the main effects of {first} and {second} with each "
                f"other (the defining relation holds {fraction.word(sign, mask)}), so no "
                "analysis could tell them apart; use longer generator words"
            )
    return fraction


def standard_fraction(names: Sequence[str], resolution: int) -> Fraction:
    """The smallest standard fraction of ``names`` (two-level factors) whose resolution is at
    least ``resolution``; the full factorial (no generators) when no fraction has it."""
    k = len(names)
    if k > max(STANDARD):
        raise DesignError(
            f"standard fractions are tabled for at most {max(STANDARD)} factors, not {k}; give "
            "the generators"
        )
    choices = sorted(
        (len(text.split()), text) for r, text in STANDARD.get(k, {}).items() if r >= resolution
    )
    if not choices:
        return Fraction(tuple(names), ())
    _, text = max(choices)  # the most generators: the fewest runs
    letters = {LETTERS[i]: name for i, name in enumerate(names)}
    raw = {}
    for item in text.split():
        factor, word = item.split("=")
        raw[letters[factor]] = "*".join(letters[letter] for letter in word)
    return parse_generators(raw, names)


def unit_points(kind: str, sizes: Sequence[int], dims: int, seed: int) -> np.ndarray:
    """Points in [0, 1)^dims: ``sizes[-1]`` rows, the first ``sizes[i]`` of which are the
    design of ``sizes[i]`` points; drawn from the campaign seed."""
    if kind == SOBOL:
        from scipy.stats import qmc

        engine = qmc.Sobol(dims, scramble=True, rng=_generator(seed, 0))
        with warnings.catch_warnings():  # balance needs 2^m points; any count is a prefix
            warnings.simplefilter("ignore", UserWarning)
            return engine.random(sizes[-1])
    return latin_hypercube(sizes, dims, seed)


def latin_hypercube(sizes: Sequence[int], dims: int, seed: int) -> np.ndarray:
    """A Latin hypercube of ``sizes[0]`` points, extended to each later size (a multiple of
    the one before): the strata of size n split into n' / n finer ones, the stored points
    keep theirs, and new points fill the empty strata of every factor in random order."""
    points = np.empty((0, dims))
    for batch, size in enumerate(sizes):
        rng = _generator(seed, batch)
        old = len(points)
        new = np.empty((size - old, dims))
        for column in range(dims):
            taken = np.zeros(size, dtype=bool)
            taken[np.floor(points[:, column] * size).astype(np.int64)] = True
            empty = np.flatnonzero(~taken)
            strata = rng.permutation(empty)
            new[:, column] = (strata + rng.random(len(strata))) / size
        points = np.concatenate([points, new])
    return points


def _generator(seed: int, batch: int) -> np.random.Generator:
    key = (*POINTS_KEY, batch) if batch else POINTS_KEY
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def check_sizes(kind: str, raw) -> tuple[int, ...]:
    """The point counts of a Latin hypercube or Sobol design (``points: 20``, or for a Latin
    hypercube growing sizes ``points: [20, 40]``); one-line errors."""
    sizes = raw if isinstance(raw, list) and kind == LATIN_HYPERCUBE else [raw]
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_POINTS:
            allowed = f"an integer from 1 to {MAX_POINTS:,}"
            if kind == LATIN_HYPERCUBE:
                allowed += " or a list of growing sizes, each a multiple of the one before"
            raise DesignError(f"{raw!r} is not allowed; use {allowed}")
    for small, large in itertools.pairwise(sizes):
        if large <= small or large % small:
            raise DesignError(
                f"{raw!r}: each size must be a larger multiple of the one before, so that "
                "every size stays a Latin hypercube and keeps the points before it"
            )
    return tuple(sizes)


def is_stratified(column: np.ndarray) -> bool:
    """Whether n values in [0, 1) fall one in each of the n strata [i/n, (i+1)/n)."""
    strata = np.floor(np.asarray(column) * len(column)).astype(np.int64)
    return bool(np.array_equal(np.sort(strata), np.arange(len(column))))


def saltelli_points(samples: int, dims: int, second_order: bool, seed: int) -> np.ndarray:
    """SALib's Saltelli sample in [0, 1]^dims from the campaign seed: ``samples`` blocks of
    dims + 2 points (2 dims + 2 with ``second_order``), the first n of which are the sample of
    n base samples."""
    from SALib.sample import sobol

    with warnings.catch_warnings():  # balance needs 2^m samples; any count is a prefix
        warnings.simplefilter("ignore")
        return sobol.sample(
            unit_problem(dims), samples, calc_second_order=second_order, seed=_generator(seed, 0)
        )


def morris_points(trajectories: int, dims: int, levels: int, seed: int) -> np.ndarray:
    """SALib's Morris trajectories on a grid of ``levels`` values in [0, 1]^dims from the
    campaign seed: ``trajectories`` blocks of dims + 1 points, each one step from the one
    before in one factor."""
    from SALib.sample import morris

    return morris.sample(unit_problem(dims), trajectories, levels, seed=_generator(seed, 0))


def points_per_sample(kind: str, dims: int, second_order: bool = False) -> int:
    """The design points of one base sample (Saltelli) or trajectory (Morris); 1 otherwise."""
    if kind == SALTELLI:
        return 2 * dims + 2 if second_order else dims + 2
    return dims + 1 if kind == MORRIS else 1


def unit_problem(dims: int) -> dict:
    """SALib's problem over the unit cube: the ranges are scaled here, on their own scale."""
    return {"num_vars": dims, "names": [f"x{i}" for i in range(dims)], "bounds": [[0, 1]] * dims}


def scale(
    unit: np.ndarray, low: float, high: float, log: bool = False, integer: bool = False
) -> np.ndarray:
    """Unit values onto the range [low, high], uniform in log(value) with ``log``; with
    ``integer`` each integer k of low..high takes the part [k, k + 1) of the range."""
    top = high + 1 if integer else high
    if log:
        values = np.exp(np.log(low) + unit * (np.log(top) - np.log(low)))
    else:
        values = low + unit * (top - low)
    if integer:
        return np.clip(np.floor(values), low, high).astype(np.int64)
    return values


def unscale(values: np.ndarray, low: float, high: float, log: bool = False) -> np.ndarray:
    """Values of a range back onto [0, 1] on its scale (an analysis's inputs)."""
    values = np.asarray(values, dtype=float)
    if log:
        return (np.log(values) - np.log(low)) / (np.log(high) - np.log(low))
    return (values - low) / (high - low)
