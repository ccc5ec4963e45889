"""The NumPy source of the notebooks' code cells: fixed text a student reads, chosen by the view.

No cell here holds anything from a view except through ui.export.python_literal (the inputs,
the check's steps and bounds): the view's options only choose between texts.
The lines mirror ln_core/forward.py and ln_core/backward.py operation for operation, in the same
order, so a notebook computes the lab's numbers to the last bit in float64 and in float32.
LAYER and BATCH are the same lines: BatchNorm only averages over the batch axis instead.

`skipped` is ln_core's name for the affine parameters a layer leaves out: (), ("beta",) or
("gamma", "beta"). A line that would use a skipped parameter passes its other input on.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import replace

from ln_core.forward import LINES
from ln_core.nodes import NODE_NAMES, NODES, Node
from teaching.glossary import meaning
from ui.export.notebook_norm import Norm, Step

# Each node's forward line as NumPy, from the lesson's table (mean() keeps the axes as size 1).
FORWARD = {node.name: f"{node.name} = {node.numpy}" for node in NODES}
# The two lines as they run when their parameter is left out.
PASSED_ON = {"gx": "gx = normalized_x", "out": "out = gx"}


def sizes(statistic: str, averaged: str, shared: str, why: str) -> str:
    """The two sizes the backward pass needs, from the forward pass's own shapes: n, the
    entries `statistic` (a node) averages over (`averaged`, in words), and the axes gamma and
    beta are shared along (`shared`, an expression; `why`, in words)."""
    return (
        f"# n: how many entries each mean averages over ({averaged}).\n"
        f"n = x.size // {statistic}.size\n"
        f"# {why}, so their gradients sum over these axes.\n"
        f"shared = {shared}"
    )


def complete(gradients: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The gradients whole after a step: all it gives but the parts of a sum ("_via_")."""
    return tuple(name for name, _ in gradients if "_via_" not in name)


def _undone(node: Node, reused: str) -> Step:
    """A forward line of the table undone, as ln_core/backward.py undoes it."""
    number = NODE_NAMES.index(node.name) + 1
    return Step(number, node.undo, complete(node.undo), node.rule.format(reused=reused))


def _last_two(skipped: tuple[str, ...], count: int, reused: str) -> tuple[Step, Step]:
    """The last two lines (out and gx, of `count`), which depend on the affine parameters the
    layer applies; `reused`: what the parameters are shared by, in words. Every normalization
    here ends with LayerNorm's two affine lines."""
    out, gx = (replace(_undone(NODES[i], reused), number=count + i + 1) for i in (-1, -2))
    if "beta" in skipped:
        passed = out.gradients[:1]
        out = Step(
            count,
            passed,
            complete(passed),
            "out = gx passes gx on, so its gradient is dout unchanged.",
        )
    if "gamma" in skipped:
        passed = (("dnormalized_x", "dgx"),)
        gx = Step(
            count - 1,
            passed,
            complete(passed),
            "gx = normalized_x passes normalized_x on, so its gradient is dgx unchanged.",
        )
    return out, gx


# Lines 8 to 1 undone, from the lesson's table.
_MIDDLE = tuple(_undone(node, "") for node in reversed(NODES[:-2]))


def backward_steps(skipped: tuple[str, ...], norm: Norm) -> tuple[Step, ...]:
    """The forward lines undone, from the last to line 1 (as ln_core/backward.py)."""
    return (*_last_two(skipped, len(norm.lines), norm.reused), *norm.middle)


def forward_line(node: str, skipped: tuple[str, ...], norm: Norm) -> str:
    """The node's NumPy line as this layer runs it."""
    missing = set(skipped) & {"gx": {"gamma"}, "out": {"beta"}}.get(node, set())
    return PASSED_ON[node] if missing else norm.forward[node]


def line_heading(number: int, skipped: tuple[str, ...], norm: Norm) -> str:
    """`Line 9: gx = gamma * normalized_x`, in ln_core's words (saying what it skipped)."""
    return f"Line {number}: {norm.lines[number - 1].text(skipped)}"


def forward_cell(node: str, skipped: tuple[str, ...], norm: Norm) -> str:
    """One forward node: its line in words, the NumPy line, and the value shown."""
    heading = line_heading(norm.nodes.index(node) + 1, skipped, norm)
    return (
        f"# {heading}\n# {node}: {norm.meanings[node]}\n{forward_line(node, skipped, norm)}\n{node}"
    )


def backward_cell(step: Step, skipped: tuple[str, ...], norm: Norm) -> str:
    """One forward line undone, in plain NumPy, headed by the line and its rule."""
    lines = "\n".join(f"{name} = {expression}" for name, expression in step.gradients)
    heading = line_heading(step.number, skipped, norm)
    return f"# Undo {heading}\n{_comment(step.rule)}\n{lines}"


def reads(step: Step, gradients: Collection[str]) -> tuple[str, ...]:
    """The gradients (of `gradients`) a step's lines read that it does not give itself."""
    own = {name for name, _ in step.gradients}
    found: list[str] = []
    for _, expression in step.gradients:
        for name in _NAME.findall(expression):
            if name in gradients and name not in own and name not in found:
                found.append(name)
    return tuple(found)


def undo_name(step: Step) -> str:
    """The exercise's function for a step: undo_line_7."""
    return f"undo_line_{step.number}"


def blank_cell(step: Step, skipped: tuple[str, ...], norm: Norm, read: tuple[str, ...]) -> str:
    """The same step for the exercise: a function of the gradients it reads, every gradient it
    gives left as a marked blank."""
    gives = [name for name, _ in step.gradients]
    blanks = [
        f"    {name} = None  # TODO: your formula{'' if name in step.checked else _LATER}"
        for name in gives
    ]
    return "\n".join(
        [
            f"# Undo {line_heading(step.number, skipped, norm)}",
            f"def {undo_name(step)}({', '.join(read)}):",
            *blanks,
            f"    return {', '.join(gives)}",
        ]
    )


_LATER = " (one part of a sum; it is checked with that sum)"
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def _comment(text: str, width: int = 96) -> str:
    """Text as comment lines of at most `width` characters."""
    lines, current = [], "#"
    for word in text.split():
        if len(current) + 1 + len(word) > width:
            lines.append(current)
            current = "#"
        current += " " + word
    return "\n".join([*lines, current])


def numpy_lines(skipped: tuple[str, ...] = ()) -> str:
    """The whole forward and backward pass as plain lines, for the one-cell NumPy snippet."""
    forward = [forward_line(node, skipped, LAYER) for node in NODE_NAMES]
    backward = [
        f"{name} = {expression}"
        for step in backward_steps(skipped, LAYER)
        for name, expression in step.gradients
    ]
    return "\n".join(
        [
            "# Forward: the ten nodes.",
            *forward,
            "",
            LAYER.sizes,
            "",
            "# Backward: the lines undone, 10 to 1, for the loss sum(dout * out).",
            *backward,
        ]
    )


REL_ERROR = '''\
def rel_error(a, b):
    """max |a - b| / max(|a| + |b|): the lab's error, one number per tensor (0 when both are 0)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    gap = float(np.max(np.abs(a - b)))
    return gap / float(np.max(np.abs(a) + np.abs(b))) if gap > 0 else 0.0


RESOLVE = 0.1  # a pass must pin the true value to at least one significant digit


def rule(gap, bound, size):
    """The lab's one verdict rule (ln_core/verdict.py). gap: how far an answer sits from the
    numerical gradient; bound: how far round-off and the step can put a right answer (both per
    entry, or one number for all); size: the gradient's largest entry. Beyond the bound no
    round-off explains the gap; within it, the check vouches for an answer only where the bound
    is small against the gradient itself."""
    if np.any(np.asarray(gap) > bound):
        return "fail"
    if np.max(bound) > RESOLVE * size or size == 0:
        return "cannot resolve"
    return "pass"'''

# The compact formula of ln_core/closed_form.py, term by term, against the staged pass.
CLOSED_FORM = """\
# dx = s * (g - mean(g) - normalized_x * mean(g * normalized_x)), s = inv_sqrt_sve,
# g = dout * gamma: the staged pass above folded into one line, split by the path x takes.
g = dout if gamma is None else gamma * dout
direct = inv_sqrt_sve * g
through_mean = -inv_sqrt_sve * np.mean(g, axis=axis, keepdims=True)
mean_g_xhat = np.mean(g * normalized_x, axis=axis, keepdims=True)
through_variance = -inv_sqrt_sve * normalized_x * mean_g_xhat
dx_closed = direct + through_mean + through_variance
print(f"closed form against the staged pass: rel_error = {rel_error(dx_closed, dx):.1e}")"""

# The ten lines as one function, for the gradient check.
LAYERNORM = '''\
def forward(x, gamma, beta):
    """The ten forward lines in one function (gamma or beta None: left out)."""
    x_sm = x - np.mean(x, axis=axis, keepdims=True)
    inv_sqrt_sve = 1 / np.sqrt(np.mean(x_sm ** 2, axis=axis, keepdims=True) + eps)
    normalized_x = x_sm * inv_sqrt_sve
    gx = normalized_x if gamma is None else gamma * normalized_x
    return gx if beta is None else gx + beta'''

# Central differences of the loss sum(dout * out); the lab's verdict rule (ln_core/gradcheck.py).
GRADIENT_CHECK = '''\
def numerical_gradient(name, wider=1.0):
    """dL/d(name) for L = sum(dout * out): move one entry by +step and -step, run the layer
    again, and divide the change of L by the step actually taken (x + step rounds)."""
    # beta only shifts out, so moves of x and gamma are read on gx, as the lab reads them:
    # adding beta would round digits of the change away.
    inputs = {"x": x, "gamma": gamma, "beta": beta if name == "beta" else None}
    value, step = inputs[name], wider * steps[name]
    grad = np.zeros_like(value)
    for i in np.ndindex(value.shape):
        plus, minus = value.copy(), value.copy()
        plus[i] += step
        minus[i] -= step
        change = forward(**{**inputs, name: plus}) - forward(**{**inputs, name: minus})
        grad[i] = np.sum(dout * change) / (plus[i] - minus[i])
    return grad


def verdict(tensor, analytic, numerical):
    """pass, fail or cannot resolve, by the lab's rule with this tensor's bound."""
    gap = np.abs(np.asarray(analytic, dtype=np.float64) - numerical)
    return rule(gap, bound[tensor], float(np.max(np.abs(numerical))))'''

# Where the lab has no check, the notebook bounds its own differences (after `steps`), by the
# reasoning of ln_core/gradcheck.py worked out from its own numbers.
OWN_BOUND = '''\
# How far a right gradient may sit from the differences, per entry:
# - their round-off: each output a move reaches is computed again with a few roundings per
#   line, 2 + log2(n) of them through a mean of n terms;
# - their truncation, which grows as the step squared: the differences at twice the steps sit
#   three times as far, so it is at most a third of how far apart the two lie, their round-off
#   added (doubled, for the terms beyond the step squared);
# - the analytic gradient's own roundings, a few per line, of the size of its terms.
ROUND_OFF, ROUNDINGS = 3.0, 8.0  # the lab's safety factors
chain = 2 + np.log2(n)
weight = np.abs(np.asarray(dout, dtype=np.float64))


def round_off(name, wider=1.0):
    """Per entry of `name`: how far round-off can move numerical_gradient(name, wider), and the
    size of its terms, sum |dout * change| / step."""
    inputs = {"x": x, "gamma": gamma, "beta": beta if name == "beta" else None}
    value, step = inputs[name], wider * steps[name]
    error = chain * np.abs(np.asarray(forward(**inputs), dtype=np.float64))
    noise, terms = np.zeros(value.shape), np.zeros(value.shape)
    for i in np.ndindex(value.shape):
        plus, minus = value.copy(), value.copy()
        plus[i] += step
        minus[i] -= step
        change = forward(**{**inputs, name: plus}) - forward(**{**inputs, name: minus})
        taken = float(plus[i] - minus[i])
        # x reaches its whole group through the mean; gamma and beta only the outputs under them.
        hot = np.zeros(value.shape, dtype=bool)
        hot[i] = True
        reach = np.broadcast_to(hot, x.shape)
        if name == "x":
            reach = np.broadcast_to(np.any(reach, axis=axis, keepdims=True), x.shape)
        noise[i] = ROUND_OFF * machine_eps * np.sum(weight * error * reach) / taken
        terms[i] = np.sum(weight * np.abs(change)) / taken
    return noise, terms


bound = {}
for name in steps:
    (noise, terms), (twice_noise, _) = round_off(name), round_off(name, 2.0)
    wobble = np.abs(numerical_gradient(name, 2.0) - numerical_gradient(name))
    truncation = 2 * (wobble + noise + twice_noise) / 3
    own = ROUNDINGS * machine_eps * chain * float(np.max(terms))
    bound[f"d{name}"] = noise + truncation + own'''


def verdicts_cell(tensors: tuple[str, ...], gradients: tuple[str, ...]) -> str:
    """Both methods' gradients against the numerical ones, each with the lab's verdict;
    gradients: the names the staged backward above computed (its underflow is looked for
    there, as ln_core.verdict's rule does)."""
    staged = ", ".join(f'"{t}": {t}' for t in tensors)
    closed = ", ".join(f'"{t}": {"dx_closed" if t == "dx" else t}' for t in tensors)
    return f"""\
# Below the dtype's smallest normal number round-off is no longer a small fraction of each
# value, and no bound on it holds: where the backward's gradients land there, right and wrong
# look the same and the check cannot resolve them (exact zeros do not count).
tiny = float(np.finfo(x.dtype).tiny)
underflow = any(
    np.any((value != 0) & (np.abs(value) < tiny)) for value in ({", ".join(gradients)},)
)
numerical = {{f"d{{name}}": numerical_gradient(name) for name in steps}}
analytic = {{"staged backward": {{{staged}}}, "closed form": {{{closed}}}}}
failed = False
for method, grads in analytic.items():
    for tensor in numerical:
        status = verdict(tensor, grads[tensor], numerical[tensor])
        status = "cannot resolve" if underflow else status
        failed = failed or status == "fail"
        error = rel_error(grads[tensor], numerical[tensor])
        print(f"{{method:16}} {{tensor:7}} relative error {{error:.1e}}: {{status}}")
if underflow:
    print(f"Some gradients above fall below {{x.dtype}}'s smallest normal number, {{tiny:.1e}},")
    print("where round-off is no longer a small fraction of each value: scale dout up.")
print("The gradient check", "fails." if failed else "passes.")"""


def jacobian(factor: str, formula: str, projection: str) -> str:
    """The layer's Jacobian for one group, from the closed form, and the check that dout @ J
    is dx. factor: the node holding s; formula: J in words; projection: the matrix s scales."""
    return f"""\
# J[i, j] = d out_i / d x_j for the first group (its entries flattened, P of them):
# {formula}
# The first group: all of the normalized axes, the first index of the others.
grouped = [a % x.ndim for a in axis]
first = tuple(slice(None) if d in grouped else 0 for d in range(x.ndim))
xhat = normalized_x[first].reshape(-1)
s = {factor}[first].reshape(-1)[0]
P = xhat.size
scale = np.ones(P) if gamma is None else np.broadcast_to(gamma, x.shape)[first].reshape(-1)
J = scale[:, None] * s * ({projection})
# The backward pass never builds J: for this group it computes dout @ J directly.
print(f"rel_error(dout @ J, dx) for the first group = "
      f"{{rel_error(dout[first].reshape(-1) @ J, dx[first].reshape(-1)):.1e}}")"""


FIGURE = """\
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(5.5, 4.5))
limit = float(np.max(np.abs(J)))
image = ax.imshow(J, cmap="RdBu_r", vmin=-limit, vmax=limit)
ax.set_title("Jacobian d out / d x of the first group")
ax.set_xlabel("j (input x_j)")
ax.set_ylabel("i (output out_i)")
for axis_ticks in (ax.xaxis, ax.yaxis):
    axis_ticks.get_major_locator().set_params(integer=True)  # entries sit at whole numbers
fig.colorbar(image, ax=ax)
plt.show()"""


def results_cell(tensors: tuple[str, ...]) -> str:
    """Prints the view's gradients as JSON, at full precision (what the lab shows)."""
    entries = ", ".join(f'"{t}": {t}.tolist()' for t in tensors)
    return f"import json\n\nprint(json.dumps({{{entries}}}))"


# The exercise's numerical gradient of any node: move it, re-run only the lines after it, and
# bound what round-off and the step can do to it (ln_core/node_check.py's reasoning, worked out
# from the notebook's own numbers, so it holds for any normalization here).
EXERCISE_HELPERS = '''\
# The affine lines, the last two of every normalization here, as functions too.
LINE["gx"] = lambda v: v["normalized_x"] if v["gamma"] is None else v["gamma"] * v["normalized_x"]
LINE["out"] = lambda v: v["gx"] if v["beta"] is None else v["gx"] + v["beta"]
# The node a parameter enters after: gamma in the line of gx, beta in the line of out.
ENTERS_AFTER = {"gamma": "normalized_x", "beta": "gx"}
# Moving one of these reaches only the outputs it sits under; a node before normalized_x goes
# through a mean and reaches its whole group.
OWN_ENTRY = ("normalized_x", "gx", "out", "gamma", "beta")
# The lab's safety factors on round-off and on the answer's own roundings (ln_core/gradcheck.py,
# ln_core/agreement.py).
ROUND_OFF = 3.0
ROUNDINGS = 8.0


def after(values, moved, last):
    """The node `last` (gx or out) from `values`, re-running only the forward lines after the
    node `moved`."""
    v = dict(values)
    for node in NODES[NODES.index(moved) + 1:]:
        v[node] = LINE[node](v)
    return v[last]


def reached(name, value, index):
    """Which outputs (x's shape) a move of entry `index` of the node `name` changes."""
    hot = np.zeros(value.shape, dtype=bool)
    hot[index] = True
    under = np.broadcast_to(hot, x.shape)
    if name in OWN_ENTRY:
        return under
    return np.broadcast_to(np.any(under, axis=axis, keepdims=True), x.shape)


def numerical_gradient(name, wider=1.0):
    """dL/d(name) for L = sum(dout * out) by central differences, one entry at a time.

    Returns the gradient and, per entry, two sizes (both of name's shape): how far round-off
    can move each difference, and the sum of the sizes of its terms, sum |dout * change| / step.
    """
    v = node_values()
    value = v[name]
    machine_eps = np.finfo(value.dtype).eps
    if name in UNIT:
        unit = np.broadcast_to(v[UNIT[name]], value.shape)
    else:
        unit = np.full(value.shape, max(1.0, float(np.max(np.abs(value)))))
    # x far from 0 leaves fewer digits for its deviations: widen its step as the lab does.
    spread = 1.0
    if name == "x":
        spread = np.maximum(1.0, np.max(np.abs(value), axis=axis, keepdims=True) / unit)
    step = wider * np.maximum(np.cbrt(machine_eps * spread) * unit, 4 * machine_eps * np.abs(value))
    # beta only shifts out, so every other move is read on gx: adding beta would round digits
    # of the change away.
    last = "out" if name in ("beta", "out") else "gx"
    # Each output a move reaches is computed again with a few roundings per line, 2 + log2(n)
    # of them through a mean of n terms. Moving x moves its mean too, and the mean's rounding
    # (of the size of the group's largest |x|) is not cancelled by x - mean: it reaches every
    # output scaled by gamma over the group's spread.
    weight = np.abs(np.asarray(dout, dtype=np.float64))
    error = (2 + np.log2(n)) * np.abs(v[last].astype(np.float64))
    gains = np.ones(x.shape) if gamma is None else np.abs(np.broadcast_to(gamma, x.shape))
    per_spread = gains / np.broadcast_to(v[UNIT["x"]], x.shape)
    grad = np.zeros_like(value)
    noise, terms = np.zeros(value.shape), np.zeros(value.shape)
    for i in np.ndindex(value.shape):
        plus, minus = value.copy(), value.copy()
        plus[i] += step[i]
        minus[i] -= step[i]
        moved = ENTERS_AFTER.get(name, name)
        change = after({**v, name: plus}, moved, last) - after({**v, name: minus}, moved, last)
        taken = float(plus[i] - minus[i])
        grad[i] = np.sum(dout * change) / taken
        reach = reached(name, value, i)
        moved_error = error
        if name == "x":
            moved_error = error + per_spread * float(np.max(np.abs(x[reach])))
        noise[i] = ROUND_OFF * machine_eps * np.sum(weight * moved_error * reach) / taken
        terms[i] = np.sum(weight * np.abs(change)) / taken
    return grad, noise, terms


results = {}  # each check's last verdict, by gradient
parts = {}  # your parts of a sum ("_via_"), from the lab's gradients, for the line that adds them


def check(undo):
    """Run your `undo` on the lab's gradients it reads (TRUE; for a part of a sum, yours), so a
    wrong line above does not make this one look wrong, and judge each gradient it gives
    against central differences: prints and keeps in `results` "pass", "not yet" with a hint,
    or "cannot resolve" where the differences cannot judge it."""
    gives, read = GIVES[undo.__name__], READS[undo.__name__]
    upstream = {"dout": dout, **TRUE, **parts}
    blank = [name for name in read if upstream.get(name) is None]
    if blank:
        for name in gives:
            if "_via_" not in name:
                print(f"{name}: not yet. It adds {blank[0]}, which is still None: write that "
                      f"part's formula first. Hint: {HINTS[name]}")
                results[name] = "not yet"
        return
    answers = undo(*(upstream[name] for name in read))
    for name, answer in zip(gives, answers if len(gives) > 1 else (answers,)):
        if "_via_" in name:
            parts[name] = answer
        else:
            results[name] = judge(name, answer)


def your_backward():
    """Your lines in turn from dout, each on what yours before it gave: the whole pass. Returns
    every gradient, and the first left None (or None when none is)."""
    values, first_blank = {"dout": dout}, None
    for undo, gives in GIVES.items():
        read = [values[name] for name in READS[undo]]
        answers = (None,) * len(gives)
        if all(value is not None for value in read):
            answers = globals()[undo](*read)
            answers = answers if len(gives) > 1 else (answers,)
        values.update(zip(gives, answers))
        first_blank = first_blank or next((n for n, a in zip(gives, answers) if a is None), None)
    return values, first_blank


def at(index):
    """A position as (0, 1), the way you index the array."""
    return "(" + ", ".join(str(int(i)) for i in index) + ")"


def judge(name, answer):
    if answer is None:
        print(f"{name}: not yet. It is still None: write its formula above. Hint: {HINTS[name]}")
        return "not yet"
    expected, noise, terms = numerical_gradient(name[1:])
    if np.shape(answer) != expected.shape:
        print(f"{name}: not yet. It has shape {np.shape(answer)}, but a gradient has its node's "
              f"shape, {expected.shape}. Hint: {HINTS[name]}")
        return "not yet"
    # How far a right answer may sit from the differences, per entry:
    # - their round-off (above);
    # - their truncation, which grows as the step squared: the differences at twice the step
    #   sit three times as far, so it is at most a third of how far apart the two lie, their
    #   round-off added (doubled, for the terms beyond the step squared);
    # - the answer's own roundings, a few per line it went through, of the size of its terms.
    twice, twice_noise, _ = numerical_gradient(name[1:], wider=2.0)
    truncation = 2 * (np.abs(twice - expected) + noise + twice_noise) / 3
    own = ROUNDINGS * float(np.finfo(x.dtype).eps) * (2 + np.log2(n)) * float(np.max(terms))
    if name == "dx":  # x - mean carries the mean's rounding, of the size of the largest |x|
        largest = np.max(np.abs(x), axis=axis, keepdims=True)
        own *= 1 + float(np.max(largest / node_values()[UNIT["x"]]))
    bound = noise + truncation + own
    size = float(np.max(np.abs(expected)))
    gap = np.abs(np.asarray(answer, dtype=np.float64) - expected)
    status = rule(gap, bound, size)
    largest_gap, largest_bound = float(np.max(gap)), float(np.max(bound))
    if status == "pass":
        print(f"{name}: pass (off by {largest_gap:.1e}, within the {largest_bound:.1e} round-off "
              "explains)")
        return "pass"
    if status == "cannot resolve":
        if size == 0:
            why = ("the gradient is exactly 0 here, and a formula wrong elsewhere can give 0 "
                   "here too")
        else:
            why = (f"here round-off ({largest_bound:.1e}) is not small against the gradient "
                   f"itself ({size:.1e}), so a right and a wrong answer look alike")
        other = "another example" if x.dtype == np.float64 else "float64 or another example"
        print(f"{name}: cannot resolve: {why}; try {other}.")
        return "cannot resolve"
    worst = np.unravel_index(np.argmax(gap - bound), gap.shape)
    print(f"{name}: not yet (off by {float(gap[worst]):.1e} at {at(worst)}, more than the "
          f"{float(bound[worst]):.1e} round-off explains there). Hint: {HINTS[name]}")
    return "not yet"'''


def hints_cell(steps: tuple[Step, ...]) -> str:
    """HINTS: each checked gradient's rule (lab-written text, as Python string literals)."""
    entries = "\n".join(f"    {name!r}: {step.rule!r}," for step in steps for name in step.checked)
    return f"HINTS = {{\n{entries}\n}}"


def wiring_cell(steps: tuple[Step, ...], read: Mapping[str, tuple[str, ...]]) -> str:
    """Which gradients each of the exercise's functions gives and reads, in backward order."""
    gives = "\n".join(
        f"    {undo_name(step)!r}: {tuple(name for name, _ in step.gradients)!r}," for step in steps
    )
    reading = "\n".join(f"    {undo_name(step)!r}: {read[undo_name(step)]!r}," for step in steps)
    return f"GIVES = {{\n{gives}\n}}\nREADS = {{\n{reading}\n}}"


def check_cell(step: Step) -> str:
    """The exercise's check of one step's function."""
    return f"check({undo_name(step)})"


def final_check(tensors: tuple[str, ...]) -> str:
    """The exercise's last cell: all your lines together, and the dx, dgamma and dbeta they
    give."""
    names = ", ".join(f'"{t}"' for t in tensors)
    return f"""\
yours, first_blank = your_backward()
final = []
for name in ({names},):
    if yours[name] is None:
        print(f"{{name}}: not yet. Your lines stop at {{first_blank}}, still None: write it first.")
        final.append("not yet")
    else:
        final.append(judge(name, yours[name]))
if all(result == "pass" for result in final):
    print("All pass: your backward pass gives the lab's gradients.")
elif "not yet" in final:
    print("Not yet: fix the gradients marked not yet, from the first one up.")
else:
    print("None is wrong, but the check cannot resolve every one here (see above).")"""


# The exercise's table of LayerNorm's forward lines (ENTERS_AFTER and the affine lines follow).
LAYERNORM_LINES = '''\
NODES = ("x", "sample_mean", "x_sm", "sq_xsm", "sample_var", "sve", "sqrt_sve", "inv_sqrt_sve",
         "normalized_x", "gx", "out")
# Each node's natural size; its step is cbrt(machine eps) of it (the lab's rule, node_check.py).
UNIT = {"x": "sqrt_sve", "sample_mean": "sqrt_sve", "x_sm": "sqrt_sve", "sq_xsm": "sve",
        "sample_var": "sve", "sve": "sve", "sqrt_sve": "sqrt_sve", "inv_sqrt_sve": "inv_sqrt_sve"}

# The forward lines again, each as a function of the values before it.
LINE = {
    "sample_mean": lambda v: np.mean(v["x"], axis=axis, keepdims=True),
    "x_sm": lambda v: v["x"] - v["sample_mean"],
    "sq_xsm": lambda v: v["x_sm"] ** 2,
    "sample_var": lambda v: np.mean(v["sq_xsm"], axis=axis, keepdims=True),
    "sve": lambda v: v["sample_var"] + eps,
    "sqrt_sve": lambda v: np.sqrt(v["sve"]),
    "inv_sqrt_sve": lambda v: 1 / v["sqrt_sve"],
    "normalized_x": lambda v: v["x_sm"] * v["inv_sqrt_sve"],
}


def node_values():
    """The inputs and every node of the forward pass above, by name."""
    return {"x": x, "gamma": gamma, "beta": beta, "sample_mean": sample_mean, "x_sm": x_sm,
            "sq_xsm": sq_xsm, "sample_var": sample_var, "sve": sve, "sqrt_sve": sqrt_sve,
            "inv_sqrt_sve": inv_sqrt_sve, "normalized_x": normalized_x, "gx": gx, "out": out}'''

LAYER = Norm(
    title="LayerNorm",
    words="",
    lines=LINES,
    forward=FORWARD,
    meanings={node: meaning(node) for node in NODE_NAMES},
    middle=_MIDDLE,
    reused="every group",
    axis=None,
    groups={
        (-1,): "per token: a vector's D features share one mean",
        (-2, -1): "per sequence: a sequence's L x D numbers share one mean",
    },
    sizes=sizes(
        "sample_mean",
        "D per token, L x D per sequence",
        "tuple(range(x.ndim - len(axis)))",
        "gamma and beta are shared by every group",
    ),
    closed_form=CLOSED_FORM,
    layer=LAYERNORM,
    jacobian=jacobian(
        "inv_sqrt_sve",
        "J = gamma_i * s * (1 if i == j else 0) - gamma_i * s * (1 + normalized_x_i * "
        "normalized_x_j) / P",
        "np.eye(P) - 1 / P - np.outer(xhat, xhat) / P",
    ),
    exercise_lines=LAYERNORM_LINES,
)

# BatchNorm is LayerNorm's lines over the batch axis: each feature is a group of N values.
BATCH = replace(
    LAYER,
    title="BatchNorm",
    words="BatchNorm: each feature normalized over the N vectors",
    meanings={
        **LAYER.meanings,
        "sample_mean": "the mean of the feature's N entries, one per vector of the batch",
        "sample_var": "sample variance: the mean of the squared deviations (divided by N)",
    },
    reused="every vector of the batch",
    axis=(0,),
    groups={(0,): "BatchNorm: a feature's N values, one per vector, share one mean"},
    sizes=sizes(
        "sample_mean",
        "the N vectors of the batch",
        "axis",
        "gamma and beta have one entry per feature, used by every vector of the batch",
    ),
)
