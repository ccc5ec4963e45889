# The cells every normalization's notebooks share.
# Jupytext's percent format: "# %% name" starts the cell `name` (ui/export/notebook_norm.py reads
# them); a __NAME__ is filled in from the view (numbers and names, never a user's text). Never
# imported: the names these cells read are the notebook's own.

# %% rel-error
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
    return "pass"


# %% sizes
# n: how many entries each mean averages over (__AVERAGED__).
n = x.size // __STATISTIC__.size
# __WHY__, so their gradients sum over these axes.
shared = __SHARED__


# %% gradient-check
def numerical_gradient(name, wider=1.0):
    """dL/d(name) for L = sum(dout * out): move one entry by +step and -step, run the layer
    again, and divide the change of L by the step actually taken (x + step rounds). In
    float64 whatever the inputs' dtype, as the lab does (and PyTorch's gradcheck advises):
    float32 differences keep too few digits to tell a right float32 gradient from a wrong one."""
    # beta only shifts out, so moves of x and gamma are read on gx, as the lab reads them:
    # adding beta would round digits of the change away.
    inputs = {"x": x, "gamma": gamma, "beta": beta if name == "beta" else None}
    inputs = {k: None if v is None else np.asarray(v, dtype=np.float64) for k, v in inputs.items()}
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
    return rule(gap, bound[tensor], float(np.max(np.abs(numerical))))


# %% own-bound
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
    bound[f"d{name}"] = noise + truncation + own


# %% check-verdicts
# Below the dtype's smallest normal number round-off is no longer a small fraction of each
# value, and no bound on it holds: where the backward's gradients land there, right and wrong
# look the same and the check cannot resolve them (exact zeros do not count).
tiny = float(np.finfo(x.dtype).tiny)
underflow = any(
    np.any((value != 0) & (np.abs(value) < tiny)) for value in (__GRADIENTS__,)
)
numerical = {f"d{name}": numerical_gradient(name) for name in steps}
analytic = {"staged backward": __STAGED__, "closed form": __CLOSED__}
failed = False
for method, grads in analytic.items():
    for tensor in numerical:
        status = verdict(tensor, grads[tensor], numerical[tensor])
        status = "cannot resolve" if underflow else status
        failed = failed or status == "fail"
        error = rel_error(grads[tensor], numerical[tensor])
        print(f"{method:16} {tensor:7} relative error {error:.1e}: {status}")
if underflow:
    print(f"Some gradients above fall below {x.dtype}'s smallest normal number, {tiny:.1e},")
    print("where round-off is no longer a small fraction of each value: scale dout up.")
print("The gradient check", "fails." if failed else "passes.")


# %% jacobian
# J[i, j] = d out_i / d x_j for the first group (its entries flattened, P of them):
# __FORMULA__
# The first group: all of the normalized axes, the first index of the others.
grouped = [a % x.ndim for a in axis]
first = tuple(slice(None) if d in grouped else 0 for d in range(x.ndim))
xhat = normalized_x[first].reshape(-1)
s = __FACTOR__[first].reshape(-1)[0]
P = xhat.size
scale = np.ones(P) if gamma is None else np.broadcast_to(gamma, x.shape)[first].reshape(-1)
J = scale[:, None] * s * (__PROJECTION__)
# The backward pass never builds J: for this group it computes dout @ J directly.
print(f"rel_error(dout @ J, dx) for the first group = "
      f"{rel_error(dout[first].reshape(-1) @ J, dx[first].reshape(-1)):.1e}")


# %% jacobian-figure
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
plt.show()


# %% exercise-helpers
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
    return "not yet"


# %% final-check
yours, first_blank = your_backward()
final = []
for name in (__TENSORS__,):
    if yours[name] is None:
        print(f"{name}: not yet. Your lines stop at {first_blank}, still None: write it first.")
        final.append("not yet")
    else:
        final.append(judge(name, yours[name]))
if all(result == "pass" for result in final):
    print("All pass: your backward pass gives the lab's gradients.")
elif "not yet" in final:
    print("Not yet: fix the gradients marked not yet, from the first one up.")
else:
    print("None is wrong, but the check cannot resolve every one here (see above).")
