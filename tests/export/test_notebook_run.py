"""Both notebooks run headless with nbclient on a fresh kernel (this venv's python).

The lesson reproduces the lab's dx, dgamma and dbeta to 1e-12 for 4 presets x 2 dtypes x the
three affine options (the token batch per sequence), and its gradient check says what the
lab's says; so do the comparison page's BatchNorm and RMSNorm lessons, for 2 presets x 2
dtypes (RMSNorm's check, which the lab has not, passes). The exercise, of every
normalization, says "not yet" to every check as downloaded and "pass" to all of them once its
blanks hold the lab's own formulas. Cases are batched into one notebook per test, so each test
starts one kernel.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import numpy as np
from notebook_kit import (
    LINK,
    by_id,
    code_cells,
    execute,
    lab_check,
    lab_grads,
    lab_view,
    merged,
    page_grads,
    page_view,
    printed,
)

import ln_core
from teaching.inputs import AFFINE, Inputs
from teaching.presets import make_example
from ui.export.notebook import View, exercise_notebook, lesson_notebook
from ui.export.notebook_code import backward_steps
from ui.session.state import seeded_dout_and_target

PRESETS = {
    "Random normal": "token",
    "Classroom (D = 4, integers)": "token",
    "Large common offset (about 2000)": "token",
    "Token batch (B x L x D)": "sequence",
}
CASES = [
    (preset, dtype, affine, per)
    for preset, per in PRESETS.items()
    for dtype in ("float64", "float32")
    for affine in AFFINE
]
VERDICT = re.compile(r"^(staged backward|closed form)\s+(d\w+)\s+relative error \S+: (.+)$")
METHODS = {"staged backward": "backward", "closed form": "closed_form"}
CHECK = re.compile(r"^(d\w+): (pass|not yet|cannot resolve)")


def _unresolvable() -> View:
    """D = 2 with eps = 0: dx is exactly 0, below what central differences resolve, so the
    lab says "cannot resolve" for it (tests/app/test_exports.py)."""
    x = np.array([[0.0, 3.0], [1.0, -1.0]])
    dout = np.array([[1.0, -2.0], [0.5, 2.0]])
    inputs = Inputs(x, np.ones(2), np.zeros(2), dout, 0.0, "float64")
    return View(inputs, "Random normal", LINK)


def test_the_lesson_reproduces_the_lab_for_every_preset_dtype_and_affine_option(kernels):
    cases = [*CASES, "D = 2, eps = 0"]
    views = [*(lab_view(*case) for case in CASES), _unresolvable()]
    lessons = [lesson_notebook(v) for v in views]
    apart = ("check-verdicts", "jacobian-figure", "results-code")
    run = by_id(execute(merged(lessons, drawn=4, apart=apart), kernels))
    for k, (case, view) in enumerate(zip(cases, views, strict=True)):
        shown = json.loads(printed(run[f"case{k}-results-code"]))
        grads = lab_grads(view.inputs)
        assert set(shown) == set(view.tensors), case
        for tensor, values in shown.items():
            expected = getattr(grads, tensor)
            assert np.shape(values) == expected.shape, (case, tensor)
            np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12, err_msg=str(case))
        # The notebook's verdicts are the lab's, tensor by tensor, for both methods.
        check = lab_check(view.inputs)
        lines = printed(run[f"case{k}-check-verdicts"]).splitlines()
        verdicts = {m.group(1, 2): m.group(3) for m in map(VERDICT.match, lines) if m}
        assert verdicts == {
            (method, t): check.status(name, t)
            for method, name in METHODS.items()
            for t in view.tensors
        }, case
        passes = "The gradient check passes." if check.passed else "The gradient check fails."
        assert lines[-1] == passes, case
        if k < 4:
            outputs = run[f"case{k}-jacobian-figure"].outputs
            assert any("image/png" in o.get("data", {}) for o in outputs), (case, outputs)
    assert "cannot resolve" in verdicts.values()  # the last case, where the lab cannot either


PAGE_CASES = [
    (preset, dtype, norm)
    for preset in ("Random normal", "Token batch (B x L x D)")
    for dtype in ("float64", "float32")
    for norm in ("batch", "rms")
]


def test_the_comparison_pages_batchnorm_and_rmsnorm_lessons_reproduce_its_gradients(kernels):
    views = [page_view(*case) for case in PAGE_CASES]
    apart = ("check-verdicts", "jacobian-figure", "results-code")
    run = by_id(execute(merged([lesson_notebook(v) for v in views], drawn=2, apart=apart), kernels))
    for k, (case, view) in enumerate(zip(PAGE_CASES, views, strict=True)):
        shown = json.loads(printed(run[f"case{k}-results-code"]))
        grads = page_grads(view)
        assert set(shown) == {"dx", "dgamma", "dbeta"}, case
        for tensor, values in shown.items():
            expected = getattr(grads, tensor)
            np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12, err_msg=str(case))
        lines = printed(run[f"case{k}-check-verdicts"]).splitlines()
        verdicts = {m.group(1, 2): m.group(3) for m in map(VERDICT.match, lines) if m}
        if view.norm == "batch":
            # BatchNorm's verdicts are the lab's gradient check over axis 0.
            i = view.inputs
            check = ln_core.gradient_check(i.x, i.gamma, i.beta, i.dout, i.eps, axis=0)
            statuses = {(m, t): check.status(n, t) for m, n in METHODS.items() for t in shown}
        else:
            statuses = {(m, t): "pass" for m in METHODS for t in shown}
        assert verdicts == statuses, case
        assert lines[-1] == "The gradient check passes.", case
        if k < 2:
            outputs = run[f"case{k}-jacobian-figure"].outputs
            assert any("image/png" in o.get("data", {}) for o in outputs), (case, outputs)


def _statuses(run: dict, k: int) -> list[tuple[str, str]]:
    """(gradient, status) for every check the exercise printed, in order (the final three last)."""
    found = []
    for key, cell in run.items():
        if (
            key.startswith(f"case{k}-check-") and key[len(f"case{k}-check-") :].isdigit()
        ) or key == f"case{k}-final-check":
            found += [m.group(1, 2) for m in map(CHECK.match, printed(cell).splitlines()) if m]
    return found


def _filled(exercise: bytes, lesson: bytes, mistakes: dict[str, str] | None = None) -> bytes:
    """The exercise with each `name = None  # TODO` replaced by the lesson's line for name, or
    by the line `mistakes` gives for it."""
    formulas = {}
    for source in code_cells(lesson):
        for line in source.splitlines():
            name, _, expression = line.partition(" = ")
            if expression and name.isidentifier():
                formulas[name] = line
    formulas.update(mistakes or {})
    notebook = nbformat.reads(exercise, 4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.source = "\n".join(
                line[: len(line) - len(line.lstrip())] + formulas[line.strip().split(" = ")[0]]
                if "= None  # TODO" in line
                else line
                for line in cell.source.splitlines()
            )
    return nbformat.writes(notebook).encode()


EXERCISES = [
    ("Random normal", "float64", "both", "token"),
    ("Random normal", "float32", "gamma", "token"),
    ("Classroom (D = 4, integers)", "float64", "neither", "token"),
    ("Token batch (B x L x D)", "float64", "both", "sequence"),
]
# The comparison page's BatchNorm and RMSNorm (its rows, gamma and beta both applied).
PAGE_EXERCISES = [
    ("Token batch (B x L x D)", "float64", "batch"),
    ("Random normal", "float32", "batch"),
    ("Token batch (B x L x D)", "float64", "rms"),
    ("Random normal", "float32", "rms"),
]


# The classic mistake (ln_core.bugs' drop_variance_path): x_sm's second path forgotten.
MISTAKE = {"dx_sm": "dx_sm = dx_sm_via_normalized_x"}


def test_the_exercise_fails_every_check_as_downloaded_and_passes_them_when_filled(kernels):
    cases = [*EXERCISES, *PAGE_EXERCISES]
    views = [lab_view(*case) for case in EXERCISES] + [page_view(*c) for c in PAGE_EXERCISES]
    blank = [exercise_notebook(v) for v in views]
    filled = [_filled(b, lesson_notebook(v)) for b, v in zip(blank, views, strict=True)]
    wrong = _filled(blank[0], lesson_notebook(views[0]), MISTAKE)
    executed = execute(merged([*blank, *filled, wrong]), kernels)
    nbformat.validate(executed)
    run = by_id(executed)
    for k, (case, view) in enumerate(zip(cases, views, strict=True)):
        as_downloaded, as_filled = _statuses(run, k), _statuses(run, k + len(views))
        # Every node's gradient (dgx ... dx; dgamma, dbeta if the layer has them), then the
        # final check's dx (dgamma, dbeta).
        steps = backward_steps(view.skipped, view.code)
        expected = sum(len(step.checked) for step in steps) + len(view.tensors)
        assert expected == len(view.code.lines) - 1 + 2 * len(view.tensors), case
        assert len(as_downloaded) == len(as_filled) == expected, (case, as_downloaded)
        assert all(status == "not yet" for _, status in as_downloaded), case
        assert all(status == "pass" for _, status in as_filled), (case, as_filled)
        final = printed(run[f"case{k + len(views)}-final-check"]).splitlines()[-1]
        assert final.startswith("All pass"), case
        assert printed(run[f"case{k}-final-check"]).splitlines()[-1].startswith("Not yet"), case
    # A wrong formula is "not yet" at its own check; each line after it is judged on the lab's
    # gradients, so the right lines below it pass. All the lines together give a wrong dx.
    found = _statuses(run, 2 * len(views))
    statuses, final = dict(found[:-3]), dict(found[-3:])
    assert statuses["dsq_xsm"] == statuses["dsample_mean"] == statuses["dx"] == "pass", statuses
    assert statuses["dx_sm"] == final["dx"] == "not yet", (statuses, final)
    # Where it is off is said as the student indexes it, never as NumPy's repr of an index.
    said = printed(run[f"case{2 * len(views)}-check-3"])
    assert re.search(r"dx_sm: not yet \(off by \S+ at \(\d+, \d+\),", said), said
    assert "np.int" not in said
    assert printed(run[f"case{2 * len(views)}-final-check"]).splitlines()[-1].startswith("Not yet")


def test_a_downloaded_lesson_runs_as_is_in_a_fresh_kernel_and_stays_valid(kernels):
    data = lesson_notebook(lab_view("Classroom (D = 4, integers)", "float64"))
    notebook = execute(nbformat.reads(data, 4), kernels)
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert "The gradient check passes." in printed(by_id(notebook)["check-verdicts"])
    nbformat.validate(notebook)


def _edge(shape: tuple[int, ...], seed: int = 0, **options) -> View:
    """Random normal at `shape` with the lab's seeded dout; options: dtype, gamma and beta (one
    number for every feature, instead of the example's) and norm."""
    dtype = options.get("dtype", "float64")
    example = make_example("Random normal", shape, seed)
    dout, _ = seeded_dout_and_target(example.x.shape, seed)
    gamma, beta = (
        np.full(shape[-1], options[name]) if name in options else getattr(example, name)
        for name in ("gamma", "beta")
    )
    arrays = (a.astype(dtype) for a in (example.x, gamma, beta, dout))
    return View(Inputs(*arrays, 1e-5, dtype), "Random normal", LINK, options.get("norm", "layer"))


# Views where a bound taken from how far the differences at two steps lie apart (which can
# agree by chance for a node of a few entries), or differences that carried beta's rounding,
# called right gradients wrong: the exercise's "not yet" for dinv_sqrt_sve, dsq_xsm, dsve or
# dnormalized_x, the lesson's "fail" for dx with a large beta, RMSNorm's for dgamma and dbeta.
EDGES = {
    "vector D = 6": _edge((6,)),
    "vector D = 4, seed 1": _edge((4,), seed=1),
    "vector D = 16, seed 2": _edge((16,), seed=2),
    "rows 3 x 1 (D = 1)": _edge((3, 1)),
    "beta = 1000": _edge((3, 8), beta=1e3),
    "float32, beta = 1e4": _edge((3, 8), dtype="float32", beta=1e4),
    "RMSNorm, D = 1": _edge((2, 1), gamma=1.5, norm="rms"),
    "RMSNorm, D = 1, beta = 30": _edge((2, 1), gamma=1.5, beta=30.0, norm="rms"),
    "RMSNorm, D = 3, seed 2": _edge((2, 3), seed=2, gamma=1.5, norm="rms"),
}


def test_no_check_calls_a_right_gradient_wrong_where_round_off_dominates(kernels):
    views = list(EDGES.values())
    lessons = [lesson_notebook(v) for v in views]
    filled = [
        _filled(exercise_notebook(v), lesson) for v, lesson in zip(views, lessons, strict=True)
    ]
    run = by_id(execute(merged([*lessons, *filled]), kernels))
    wrong = []
    for k, case in enumerate(EDGES):
        lines = printed(run[f"case{k}-check-verdicts"]).splitlines()
        verdicts = {m.group(2): m.group(3) for m in map(VERDICT.match, lines) if m}
        statuses = dict(_statuses(run, k + len(views)))
        assert verdicts and "pass" in statuses.values(), (case, lines, statuses)
        wrong += [(case, "lesson", t) for t, v in verdicts.items() if v == "fail"]
        wrong += [(case, "exercise", t) for t, v in statuses.items() if v == "not yet"]
    assert not wrong


def _underflowing(norm: str) -> View:
    """float32 views whose staged backward underflows, its gradient right to the digits
    float32 keeps there: RMSNorm at x about 1e7 with dout about 1e-30 (dmean_sq and dmse near
    1e-44, subnormal; the lesson failed its dx), and LayerNorm on the gradient check's case
    (tests/core/data/f32_underflow.npz: dx about 8e-41)."""
    if norm == "rms":
        rng = np.random.default_rng(5)
        x = (1e7 + 1e6 * np.round(rng.standard_normal((1, 16)), 3)).astype(np.float32)
        dout = (1e-30 * np.round(rng.standard_normal((1, 16)), 3)).astype(np.float32)
        gamma, beta, affine = np.ones(16, np.float32), np.zeros(16, np.float32), "neither"
    else:
        case = np.load(Path(__file__).parents[1] / "core" / "data" / "f32_underflow.npz")
        x, gamma, beta, dout, affine = case["x"], case["g"], case["b"], case["d"], "both"
    inputs = Inputs(x, gamma, beta, dout, 1e-5, "float32", affine=affine)
    return View(inputs, "Random normal", LINK, norm)


def test_the_lesson_cannot_resolve_what_underflows_and_fails_nothing(kernels):
    views = [_underflowing("rms"), _underflowing("layer")]
    run = by_id(execute(merged([lesson_notebook(v) for v in views]), kernels))
    for k, view in enumerate(views):
        lines = printed(run[f"case{k}-check-verdicts"]).splitlines()
        verdicts = {m.group(1, 2): m.group(3) for m in map(VERDICT.match, lines) if m}
        assert verdicts and set(verdicts.values()) == {"cannot resolve"}, (view.norm, lines)
        assert any("smallest normal number" in line for line in lines), lines
