"""The lesson's table (ln_core/nodes.py) is the code: its NumPy texts compute what run_nodes
and backward compute, bit for bit, and backward.py's stage headings are its lines.

The texts are the notebooks' code; the table is what every page, notebook and refusal prints.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import ln_core.backward
from ln_core.backward import backward, param_axes
from ln_core.forward import forward, run_nodes
from ln_core.nodes import NODE_NAMES, NODES


def _pass(gamma: bool = True):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 6)) * 1.5 + 0.25
    g = rng.normal(size=6) if gamma else None
    cache = forward(x, g, rng.normal(size=6), eps=1e-3)
    return cache, rng.normal(size=x.shape)


def _run(text: str, names: dict) -> np.ndarray:
    return eval(text, {"np": np}, names)  # the table's own texts, never a user's


@pytest.mark.parametrize("node", NODES, ids=NODE_NAMES)
def test_each_line_as_numpy_computes_the_node_run_nodes_computes(node):
    cache, _ = _pass()
    values = {"x": cache.x, "gamma": cache.gamma, "beta": cache.beta, **cache.nodes}
    names = {**values, "axis": cache.axis, "eps": cache.eps}
    position = NODE_NAMES.index(node.name)
    after = "x" if position == 0 else NODE_NAMES[position - 1]
    expected = run_nodes(values, cache.axis, cache.eps, after=after, through=node.name)
    np.testing.assert_array_equal(_run(node.numpy, names), expected[node.name])


def test_undoing_the_lines_in_reverse_gives_backwards_gradients():
    cache, dout = _pass()
    grads = backward(dout, cache)
    names = {
        "x": cache.x,
        "gamma": cache.gamma,
        **cache.nodes,
        "dout": dout,
        "axis": cache.axis,
        "n": cache.n,
        "shared": param_axes(cache.x.ndim),
    }
    for node in reversed(NODES):
        for name, text in node.undo:
            names[name] = _run(text, names)
            np.testing.assert_array_equal(names[name], getattr(grads, name), err_msg=name)


def test_backward_heads_each_stage_with_the_tables_line():
    source = inspect.getsource(ln_core.backward)
    headings = re.findall(r"^\s+# (\d+)\s+(\w+ = .+?)(?:\s{2,}\(.*)?$", source, re.M)
    expected = [(str(k + 1), node.text()) for k, node in enumerate(NODES)]
    assert sorted(headings, key=lambda h: int(h[0])) == expected


def test_every_undo_rule_names_the_line_it_undoes():
    for node in NODES:
        assert node.rule.startswith(node.text()), node.name
