# RMSNorm's own cells.
# Jupytext's percent format: "# %% name" starts the cell `name` (ui/export/notebook_norm.py reads
# them); a __NAME__ is filled in from the view (numbers and names, never a user's text). Never
# imported: the names these cells read are the notebook's own.

# %% closed-form
# dx = s * (g - normalized_x * mean(g * normalized_x)), s = inv_sqrt_mse, g = dout * gamma:
# the staged pass above folded into one line, split by the path x takes (no mean to go through).
g = dout if gamma is None else gamma * dout
direct = inv_sqrt_mse * g
mean_g_xhat = np.mean(g * normalized_x, axis=axis, keepdims=True)
through_mean_square = -inv_sqrt_mse * normalized_x * mean_g_xhat
dx_closed = direct + through_mean_square
print(f"closed form against the staged pass: rel_error = {rel_error(dx_closed, dx):.1e}")


# %% layer
def forward(x, gamma, beta):
    """The eight forward lines in one function (gamma or beta None: left out)."""
    inv_sqrt_mse = 1 / np.sqrt(np.mean(x ** 2, axis=axis, keepdims=True) + eps)
    normalized_x = x * inv_sqrt_mse
    gx = normalized_x if gamma is None else gamma * normalized_x
    return gx if beta is None else gx + beta


# %% own-steps
# The lab has no gradient check for RMSNorm: these are its rules for LayerNorm, with the root
# mean square as sigma. The step for x is sigma * cbrt(machine eps * max(1, max|x| / sigma));
# for gamma and beta at least cbrt(machine eps) times their size (out is linear in them).
machine_eps = float(np.finfo(x.dtype).eps)
sigma = float(np.median(sqrt_mse))
step_x = sigma * float(np.cbrt(machine_eps * max(1.0, float(np.max(np.abs(x))) / sigma)))
param_sizes = [float(np.max(np.abs(p))) for p in (gamma, beta) if p is not None]
step_params = max(step_x, float(np.cbrt(machine_eps)) * max([1.0, *param_sizes]))


# %% exercise-lines
NODES = ("x", "sq_x", "mean_sq", "mse", "sqrt_mse", "inv_sqrt_mse", "normalized_x", "gx", "out")
# Each node's natural size; its step is cbrt(machine eps) of it (the lab's rule, node_check.py).
UNIT = {"x": "sqrt_mse", "sq_x": "mse", "mean_sq": "mse", "mse": "mse", "sqrt_mse": "sqrt_mse",
        "inv_sqrt_mse": "inv_sqrt_mse"}

# The forward lines again, each as a function of the values before it.
LINE = {
    "sq_x": lambda v: v["x"] ** 2,
    "mean_sq": lambda v: np.mean(v["sq_x"], axis=axis, keepdims=True),
    "mse": lambda v: v["mean_sq"] + eps,
    "sqrt_mse": lambda v: np.sqrt(v["mse"]),
    "inv_sqrt_mse": lambda v: 1 / v["sqrt_mse"],
    "normalized_x": lambda v: v["x"] * v["inv_sqrt_mse"],
}


def node_values():
    """The inputs and every node of the forward pass above, by name."""
    return {"x": x, "gamma": gamma, "beta": beta, "sq_x": sq_x, "mean_sq": mean_sq, "mse": mse,
            "sqrt_mse": sqrt_mse, "inv_sqrt_mse": inv_sqrt_mse, "normalized_x": normalized_x,
            "gx": gx, "out": out}
