"""Slips made in one term of a gradient, so the lab names the one a wrong formula makes.

The right formula is built from its terms, each written by a Recipe (which upstream gradient,
which root, x − μ or x, a factor); a slip changes one or two terms' recipes the way students
do (a sign flipped, σ² + ε where its root belongs, a 1/N too many, Σ where a mean belongs,
γ forgotten, ε outside the root, x where x − μ belongs, μ and σ² taken as constants), and
two slips together are tried too. A student's formula makes a slip when it gives the slip's
numbers on every input it is tried on.

dx = dx̂/√(σ² + ε) + dσ²·2(x − μ)/N + dμ/N, with dσ² = −½ Σ dx̂ (x − μ) (σ² + ε)^(−3/2) and
dμ = −Σ dx̂/√(σ² + ε) (its part through σ² is 0): the three terms are the direct one, the
variance term and the mean term; the compact form rstd (dx̂ − mean(dx̂) − x̂ mean(dx̂ x̂))
has the same three, in the order direct, mean, variance.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import cache
from itertools import combinations

import numpy as np

from ln_core.audit.setting import Setting

# What a term divides by, in place of the right √(σ² + ε), by name. The direct and mean terms
# divide by it once, the variance term three times (x̂ twice and once in front).
RIGHT = "root"
VARIANCE = "variance"  # σ² + ε where √(σ² + ε) belongs (in one place)
EPS_OUTSIDE = "eps outside"  # σ + ε where √(σ² + ε) belongs
SIGMA = "sigma"  # σ alone, ε left out
HALF_POWER = "half power"  # (σ² + ε)^(−1/2) where (σ² + ε)^(−3/2) belongs
X_FOR_XHAT = "x for xhat"  # x where x̂ belongs, inside the variance term's mean


@dataclass(frozen=True)
class Recipe:
    """How one term is written. upstream: "dxhat" (dy γ) or "dy" (γ forgotten); root: one of
    the names above; outer, inner: "x_sm" or "x", what multiplies the variance term outside
    and inside its sum (or X_FOR_XHAT inside); times: a factor (−1 a flipped sign, 0 a
    dropped term); per_n: the power of N it is multiplied by (−1: a 1/N too many, 1: a sum
    where a mean belongs)."""

    upstream: str = "dxhat"
    root: str = RIGHT
    outer: str = "x_sm"
    inner: str = "x_sm"
    times: float = 1.0
    per_n: int = 0

    def factor(self, st: Setting) -> float:
        return self.times * float(st.n) ** self.per_n


@dataclass(frozen=True)
class Term:
    """One term of a right gradient. name: in plain words; shown: the term as written, in the
    lab's plain notation; value: its numbers on a Setting, written by a Recipe."""

    name: str
    shown: str
    value: Callable[[Setting, Recipe], np.ndarray]


@dataclass(frozen=True)
class Change:
    """A slip's change to term number `term`: fields of its Recipe set (times multiplies,
    per_n adds)."""

    term: int
    upstream: str | None = None
    root: str | None = None
    outer: str | None = None
    inner: str | None = None
    times: float = 1.0
    per_n: int = 0

    def fields(self) -> frozenset[str]:
        return frozenset(
            name
            for name in ("upstream", "root", "outer", "inner")
            if getattr(self, name) is not None
        )

    def applied(self, recipe: Recipe) -> Recipe:
        set_ = {name: getattr(self, name) for name in self.fields()}
        return replace(
            recipe, **set_, times=recipe.times * self.times, per_n=recipe.per_n + self.per_n
        )


@dataclass(frozen=True)
class Slip:
    """name: the slip as a clause ("the sign of the mean term is flipped"); explanation: why
    it is wrong; changes: what it does to the terms."""

    name: str
    explanation: str
    changes: tuple[Change, ...]

    def touches(self) -> frozenset[tuple[int, str]]:
        return frozenset((c.term, f) for c in self.changes for f in c.fields())


@dataclass(frozen=True)
class Slipped:
    """A formula with its slips: the value of the terms with the slips' recipes."""

    terms: tuple[Term, ...]
    slips: tuple[Slip, ...]

    def recipes(self) -> tuple[Recipe, ...]:
        """Each term's recipe with the slips applied."""
        recipes = [Recipe() for _ in self.terms]
        for slip in self.slips:
            for change in slip.changes:
                recipes[change.term] = change.applied(recipes[change.term])
        return tuple(recipes)


def _mean(st: Setting, a: np.ndarray) -> np.ndarray:
    return st.group_sum(a) / st.n


def _upstream(st: Setting, recipe: Recipe) -> np.ndarray:
    return st.dxhat if recipe.upstream == "dxhat" else st.dy


def _sigma(st: Setting) -> np.ndarray:
    return np.sqrt(st.cache.sample_var)


def _over(st: Setting, root: str, power: int) -> np.ndarray:
    """1/√(σ² + ε)^power, written with `root` instead."""
    s, eps = st.s, st.cache.eps
    if root == RIGHT:
        return s**power
    if root == VARIANCE:
        return s ** (power + 1)
    if root == EPS_OUTSIDE:
        return (_sigma(st) + eps) ** -float(power)
    if root == SIGMA:
        return _sigma(st) ** -float(power)
    return s ** (power - 2)  # HALF_POWER


def _direct(st: Setting, r: Recipe) -> np.ndarray:
    return r.factor(st) * _upstream(st, r) * _over(st, r.root, 1)


def _through_mean(st: Setting, r: Recipe) -> np.ndarray:
    return -r.factor(st) * _over(st, r.root, 1) * _mean(st, _upstream(st, r))


def _xs(st: Setting, which: str) -> np.ndarray:
    if which == X_FOR_XHAT:
        # x where x̂ = (x − μ)/√(σ² + ε) belongs: the term's x̂ is (x − μ) times its root.
        return st.x / st.s
    return st.x_sm if which == "x_sm" else st.x


def _through_variance(st: Setting, r: Recipe) -> np.ndarray:
    inner = _mean(st, _upstream(st, r) * _xs(st, r.inner))
    return -r.factor(st) * _over(st, r.root, 3) * _xs(st, r.outer) * inner


def _dvar(st: Setting, r: Recipe) -> np.ndarray:
    inner = st.group_sum(_upstream(st, r) * _xs(st, r.inner))
    return -0.5 * r.factor(st) * _over(st, r.root, 3) * inner


def _dmu(st: Setting, r: Recipe) -> np.ndarray:
    return -r.factor(st) * _over(st, r.root, 1) * st.group_sum(_upstream(st, r))


DIRECT, MEAN, VAR = 0, 1, 2
# A gap whose cosine with one right term is at least this is that term's error: what is left
# of the gap beside a multiple of the term is under a third of it.
LINES_UP = 0.95
DX_TERMS = (
    Term("the direct term", "dx̂/√(σ² + ε)", _direct),
    Term("the mean term", "dμ/N = −mean(dx̂)/√(σ² + ε)", _through_mean),
    Term("the variance term", "dσ²·2(x − μ)/N = −x̂ mean(dx̂ x̂)/√(σ² + ε)", _through_variance),
)
DVAR_TERMS = (Term("dσ²", "−½ Σ dx̂ (x − μ) (σ² + ε)^(−3/2)", _dvar),)
DMU_TERMS = (Term("dμ", "−Σ dx̂/√(σ² + ε)", _dmu),)
TERMS: dict[str, tuple[Term, ...]] = {
    "dx": DX_TERMS,
    "dsample_var": DVAR_TERMS,
    "dsample_mean": DMU_TERMS,
}


def _each(terms: tuple[int, ...], **change: object) -> tuple[Change, ...]:
    return tuple(Change(term, **change) for term in terms)  # type: ignore[arg-type]


def _dx_slips() -> Iterator[Slip]:
    named = {DIRECT: "direct", MEAN: "mean", VAR: "variance"}
    for t, word in named.items():
        term = f"the {word} term"
        yield Slip(
            f"the sign of {term} is flipped",
            f"{DX_TERMS[t].name.capitalize()} is {DX_TERMS[t].shown}; it enters with the "
            "opposite sign.",
            (Change(t, times=-1.0),),
        )
        yield Slip(
            f"γ is forgotten in {term} only",
            "dx̂ = dy·γ in every term: out = γ x̂ + β, so the gradient reaching x̂ is dy γ.",
            (Change(t, upstream="dy"),),
        )
        yield Slip(
            f"a 1/N too many in {term}",
            f"{DX_TERMS[t].name.capitalize()} is {DX_TERMS[t].shown}: it is divided by N once "
            "more than it should be (a 1/N inside a mean, which already divides by N).",
            (Change(t, per_n=-1),),
        )
        yield Slip(
            f"{term} is left out",
            f"{DX_TERMS[t].name.capitalize()} is {DX_TERMS[t].shown}; x reaches the loss "
            "through it too.",
            (Change(t, times=0.0),),
        )
    for t in (DIRECT, MEAN):
        yield Slip(
            f"{DX_TERMS[t].name} divides by σ² + ε where its square root belongs",
            f"{DX_TERMS[t].name.capitalize()} is {DX_TERMS[t].shown}: the variance is used "
            "where its square root, √(σ² + ε), belongs.",
            (Change(t, root=VARIANCE),),
        )
    yield Slip(
        "the variance term divides by σ² + ε where its square root belongs (x̂ written as "
        "(x − μ)/(σ² + ε))",
        "x̂ = (x − μ)/√(σ² + ε): the variance is used where its square root belongs.",
        (Change(VAR, root=VARIANCE),),
    )
    yield Slip(
        "the whole formula divides by σ² + ε where its square root belongs",
        "The factor in front is 1/√(σ² + ε): the variance is used where its square root belongs.",
        _each((DIRECT, MEAN, VAR), root=VARIANCE),
    )
    yield Slip(
        "dμ is not divided by N (Σ dx̂ where mean(dx̂) belongs)",
        "x_i moves μ by 1/N: the mean term is dμ/N = −mean(dx̂)/√(σ² + ε), a mean, not a sum.",
        (Change(MEAN, per_n=1),),
    )
    yield Slip(
        "the variance term has a sum where a mean belongs (Σ dx̂ x̂ where mean(dx̂ x̂) "
        "belongs, or the /N of 2(x − μ)/N lost)",
        "x_i moves σ² by 2(x_i − μ)/N: the variance term is −x̂ mean(dx̂ x̂)/√(σ² + ε), a "
        "mean, not a sum.",
        (Change(VAR, per_n=1),),
    )
    yield Slip(
        "sums where means belong (Σ dx̂ and Σ dx̂ x̂ where mean(dx̂) and mean(dx̂ x̂) belong)",
        "μ and σ² are means over the N features, so each x_i moves them by 1/N: both sums "
        "must be divided by N.",
        (Change(MEAN, per_n=1), Change(VAR, per_n=1)),
    )
    yield Slip(
        "the 2 of 2(x − μ)/N is lost",
        "∂σ²/∂x_i = 2(x_i − μ)/N: the square brings down a 2.",
        (Change(VAR, times=0.5),),
    )
    yield Slip(
        "the variance term is twice too large: the ½ of dσ² = −½ Σ dx̂ (x − μ)(σ² + ε)^(−3/2) "
        "is dropped (a factor 2 too many)",
        "d(σ² + ε)^(−1/2)/dσ² = −½ (σ² + ε)^(−3/2): the ½ cancels the 2 of 2(x − μ)/N only once.",
        (Change(VAR, times=2.0),),
    )
    for t in (DIRECT, MEAN):
        yield Slip(
            f"a factor 2 too many in {DX_TERMS[t].name}",
            f"{DX_TERMS[t].name.capitalize()} is {DX_TERMS[t].shown}, with no 2.",
            (Change(t, times=2.0),),
        )
    yield Slip(
        "ε is outside the root in dσ²: (σ + ε)^(−3) where (σ² + ε)^(−3/2) belongs",
        "The forward pass divided by √(σ² + ε); every power of it keeps ε under the root.",
        (Change(VAR, root=EPS_OUTSIDE),),
    )
    yield Slip(
        "dσ² has (σ² + ε)^(−1/2) where (σ² + ε)^(−3/2) belongs",
        "d(σ² + ε)^(−1/2)/dσ² = −½ (σ² + ε)^(−3/2): the power drops by one.",
        (Change(VAR, root=HALF_POWER),),
    )
    yield Slip(
        "μ and σ² are treated as constants: dx = dx̂/√(σ² + ε)",
        "x moves μ and σ² too, and they move every x̂: the mean and the variance terms are missing.",
        (Change(MEAN, times=0.0), Change(VAR, times=0.0)),
    )
    yield Slip(
        "μ and σ² are treated as constants: dx = dx̂/σ",
        "x moves μ and σ² too, and they move every x̂: the mean and the variance terms are "
        "missing (and ε is left out of the root).",
        (Change(DIRECT, root=SIGMA), Change(MEAN, times=0.0), Change(VAR, times=0.0)),
    )
    yield Slip(
        "x where x − μ belongs in the variance term: 2x/N instead of 2(x − μ)/N",
        "∂σ²/∂x_i = 2(x_i − μ)/N.",
        (Change(VAR, outer="x"),),
    )
    yield Slip(
        "x where x − μ belongs inside dσ²: Σ dx̂ x instead of Σ dx̂ (x − μ)",
        "σ² is the mean of (x − μ)², so dσ² sums dx̂ (x − μ).",
        (Change(VAR, inner="x"),),
    )
    yield Slip(
        "x where x̂ belongs inside the variance term's mean: mean(dx̂ x) instead of mean(dx̂ x̂)",
        "Taking 1/√(σ² + ε) out of the variance term leaves x̂ x̂_j: the mean weighs dx̂ by x̂, "
        "not by x.",
        (Change(VAR, inner=X_FOR_XHAT),),
    )
    yield Slip(
        "x where x − μ belongs, in both places of the variance term",
        "σ² is the mean of (x − μ)²: the variance term is (x − μ) mean(dx̂ (x − μ))/(σ² + ε)^(3/2).",
        (Change(VAR, outer="x", inner="x"),),
    )


def _dvar_slips() -> Iterator[Slip]:
    yield Slip(
        "the ½ of dσ² is dropped",
        "d(σ² + ε)^(−1/2)/dσ² = −½ (σ² + ε)^(−3/2).",
        (Change(0, times=2.0),),
    )
    yield Slip(
        "ε is outside the root: (σ + ε)^(−3) where (σ² + ε)^(−3/2) belongs",
        "The forward pass divided by √(σ² + ε); every power of it keeps ε under the root.",
        (Change(0, root=EPS_OUTSIDE),),
    )
    yield Slip(
        "(σ² + ε)^(−1/2) where (σ² + ε)^(−3/2) belongs",
        "d(σ² + ε)^(−1/2)/dσ² = −½ (σ² + ε)^(−3/2): the power drops by one.",
        (Change(0, root=HALF_POWER),),
    )
    yield Slip(
        "x where x − μ belongs: Σ dx̂ x instead of Σ dx̂ (x − μ)",
        "x̂ = (x − μ)/√(σ² + ε), so dσ² sums dx̂ (x − μ).",
        (Change(0, inner="x"),),
    )
    yield Slip(
        "a mean where a sum belongs",
        "dσ² collects dx̂ (x − μ) from every feature: a sum, not a mean.",
        (Change(0, per_n=-1),),
    )


def _dmu_slips() -> Iterator[Slip]:
    yield Slip(
        "divides by σ² + ε where its square root belongs",
        "x̂ = (x − μ)/√(σ² + ε): ∂x̂/∂μ = −1/√(σ² + ε).",
        (Change(0, root=VARIANCE),),
    )
    yield Slip(
        "ε is outside the root: σ + ε where √(σ² + ε) belongs",
        "The forward pass divided by √(σ² + ε).",
        (Change(0, root=EPS_OUTSIDE),),
    )
    yield Slip(
        "a mean where a sum belongs",
        "μ moves every x̂: dμ collects dx̂ from every feature, a sum, not a mean.",
        (Change(0, per_n=-1),),
    )


SLIPS: dict[str, tuple[Slip, ...]] = {
    "dx": tuple(_dx_slips()),
    "dsample_var": tuple(_dvar_slips()),
    "dsample_mean": tuple(_dmu_slips()),
}


@dataclass(frozen=True)
class Candidates:
    """Every slipped formula of one target, in the order they are tried, and how each is
    built: recipes[t] lists the distinct recipes of term t, chosen[t][k] the one candidate k
    uses, so each distinct term is computed once per Setting and every candidate at once."""

    slipped: tuple[Slipped, ...]
    recipes: tuple[tuple[Recipe, ...], ...]
    chosen: tuple[np.ndarray, ...]


@cache
def candidates(target: str) -> Candidates:
    """Every slip of `target`'s terms, then every two of them that change different things
    (a sign and a 1/N in one term go together; two roots for one term do not)."""
    slips = SLIPS.get(target, ())
    terms = TERMS.get(target, ())
    single = tuple(Slipped(terms, (slip,)) for slip in slips)
    pairs = tuple(
        Slipped(terms, (a, b)) for a, b in combinations(slips, 2) if not a.touches() & b.touches()
    )
    slipped = single + pairs
    built = [s.recipes() for s in slipped]
    recipes = tuple(tuple(dict.fromkeys(b[t] for b in built)) for t in range(len(terms)))
    chosen = tuple(np.array([recipes[t].index(b[t]) for b in built]) for t in range(len(terms)))
    return Candidates(slipped, recipes, chosen)


@dataclass(frozen=True)
class Compared:
    """The student's formula on one Setting: its value and how far from a slip's value it
    may be and still make that slip (round-off, its own and the slip's)."""

    setting: Setting
    yours: np.ndarray
    tolerance: np.ndarray


def _terms(found: Candidates, terms: tuple[Term, ...], st: Setting) -> list[np.ndarray]:
    """Each term's distinct recipes on `st`, stacked on a leading axis. A recipe's factor
    scales its term, so the term is computed once per way of writing it."""
    stacks = []
    with np.errstate(all="ignore"):
        for t, term in enumerate(terms):
            written: dict[Recipe, np.ndarray] = {}
            scaled = []
            for r in found.recipes[t]:
                plain = replace(r, times=1.0, per_n=0)
                if plain not in written:
                    written[plain] = term.value(st, plain)
                scaled.append(written[plain] * r.factor(st))
            stacks.append(np.stack(scaled))
    return stacks


def _agree(
    found: Candidates, stacks: list[np.ndarray], c: Compared, which: np.ndarray
) -> np.ndarray:
    """For the candidates `which` (indices), whether each gives the student's numbers on c."""
    with np.errstate(all="ignore"):
        total = sum(stack[found.chosen[t][which]] for t, stack in enumerate(stacks))
        gap = np.abs(c.yours - total)
        # NaN or inf compares False: not this slip.
        return np.all(gap <= c.tolerance, axis=tuple(range(1, gap.ndim)))


def made_by(target: str, probes: list[Compared], own: Compared | None) -> Slipped | None:
    """The first candidate whose numbers are the student's on every probe, all candidates
    compared at once (the probes are small), then on the student's own inputs, one at a time
    among those left (they may be large)."""
    found, terms = candidates(target), TERMS.get(target, ())
    which = np.arange(len(found.slipped))
    for c in probes:
        which = which[_agree(found, _terms(found, terms, c.setting), c, which)]
    stacks = None if own is None or not len(which) else _terms(found, terms, own.setting)
    for k in which:
        if own is None or _agree(found, stacks, own, np.array([k]))[0]:
            return found.slipped[k]
    return None


def differs_most(target: str, st: Setting, yours: np.ndarray) -> Term | None:
    """The right term the gap (yours − true) is nearly a multiple of (cosine ≥ LINES_UP over
    the entries); None for a target without terms, a gap spread over several or one larger
    than the true value."""
    terms = TERMS.get(target, ())
    if len(terms) < 2:
        return None
    parts = [np.broadcast_to(term.value(st, Recipe()), st.x.shape) for term in terms]
    right = sum(parts)
    gap = np.broadcast_to(yours, st.x.shape) - right
    size = np.linalg.norm(gap)
    # A gap larger than the true value is not one term written wrong but another formula.
    if not np.isfinite(size) or size == 0 or size > np.linalg.norm(right):
        return None
    cosines = [
        abs(float(np.sum(gap * part))) / (size * norm) if (norm := np.linalg.norm(part)) else 0.0
        for part in parts
    ]
    best = int(np.argmax(cosines))
    return terms[best] if cosines[best] >= LINES_UP else None
