# LayerNorm's own cells (BatchNorm's too: the same lines over the batch axis).
# Jupytext's percent format: "# %% name" starts the cell `name` (ui/export/notebook_norm.py reads
# them); a __NAME__ is filled in from the view (numbers and names, never a user's text). Never
# imported: the names these cells read are the notebook's own.

# %% closed-form
# dx = s * (g - mean(g) - normalized_x * mean(g * normalized_x)), s = inv_sqrt_sve,
# g = dout * gamma: the staged pass above folded into one line, split by the path x takes.
g = dout if gamma is None else gamma * dout
direct = inv_sqrt_sve * g
through_mean = -inv_sqrt_sve * np.mean(g, axis=axis, keepdims=True)
mean_g_xhat = np.mean(g * normalized_x, axis=axis, keepdims=True)
through_variance = -inv_sqrt_sve * normalized_x * mean_g_xhat
dx_closed = direct + through_mean + through_variance
print(f"closed form against the staged pass: rel_error = {rel_error(dx_closed, dx):.1e}")


# %% layer
def forward(x, gamma, beta):
    """The ten forward lines in one function (gamma or beta None: left out)."""
    __FORWARD__
    gx = normalized_x if gamma is None else gamma * normalized_x
    return gx if beta is None else gx + beta


# %% exercise-lines
# Each node's natural size; its step is cbrt(machine eps) of it (the lab's rule, node_check.py).
UNIT = {__UNIT__}

# The forward lines again, each as a function of the values before it.
LINE = {
__LINE__
}
NODES = ("x", *LINE, "gx", "out")


def node_values():
    """The inputs and every node of the forward pass above, by name."""
    return {__VALUES__}
