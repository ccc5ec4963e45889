"""What each name in the lab means, in plain words. The names are the code's; these are not."""

from __future__ import annotations

from ln_core.nodes import NODES

# The ten nodes' meanings are the lesson's table's; then the inputs and gradients the pages
# also name.
MEANINGS = {
    **{node.name: node.meaning for node in NODES},
    "x": "the input: one vector of D features per row (an input, never computed)",
    "gamma": "the learned scale, one per feature (an input)",
    "beta": "the learned shift, one per feature (an input)",
    "eps": "a small constant added to the variance so the square root is never 0 (an input)",
    "dout": "the upstream gradient dL/dout that the backward pass starts from (an input)",
    "dx": "the gradient of the loss with respect to x: what the backward pass is for",
    "dgamma": "the gradient with respect to gamma, summed over every vector",
    "dbeta": "the gradient with respect to beta: dout summed over every vector",
    # Words the pages use about arrays and layers.
    "keepdims": "a reduction (a mean, a sum) that keeps the reduced axis with size 1, so "
    "sample_mean of an (N, D) x has shape (N, 1) and lines up with x row by row",
    "broadcast": "NumPy stretching an array along an axis of size 1 (or a missing one) to match "
    "another: x - sample_mean subtracts each row's one mean from all D of its entries",
    "staged": "computed one small named line at a time (the ten nodes), each kept for the "
    "backward pass, as opposed to the one-line closed form",
    "post-LN": "a residual block that applies LayerNorm after adding the skip: "
    "y = LN(x + F(x)), as in the original Transformer",
}


def described(name: str) -> bool:
    """True if `meaning` knows the name (a node, an input, or the gradient of one)."""
    return name in MEANINGS or (name.startswith("d") and name[1:] in MEANINGS)


def meaning(name: str) -> str:
    """The plain meaning of a node or input name, or of its gradient (d + name)."""
    if name in MEANINGS:
        return MEANINGS[name]
    if described(name):
        return f"the gradient of the loss with respect to {name[1:]} ({MEANINGS[name[1:]]})"
    raise KeyError(f"No plain meaning for {name!r}.")
