"""The lesson's table (ln_core/nodes.py) is the code: its NumPy texts compute what run_nodes
and backward compute, bit for bit, and backward.py's stage headings are its lines.

The texts are the notebooks' code; the table is what every page, notebook and refusal prints.
"""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

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


def _texts(value: object, key: str = ""):
    """Every (key, string) in a parsed TOML value, however deep."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v, key)
    elif isinstance(value, str):
        yield key, value


def test_the_audits_own_words_quote_the_tables_lines():
    """A document's lines and formulas are its own (errata included); where the audit's words
    name a forward line of the lab (doc004's "gx = gamma * normalized_x"), it is the table's."""
    own = {"line", "latex", "formula"}
    names = "|".join(NODE_NAMES)
    written = re.compile(rf"(?<![\w\\])({names}) = ([^.,;:\n]+)")
    expression = {node.name: node.expression for node in NODES}
    quoted = []
    for path in sorted(Path("ln_core/audit").glob("*.toml")):
        for key, text in _texts(tomllib.loads(path.read_text())):
            if key not in own:
                quoted += [(path.name, m[1], m[2].strip()) for m in written.finditer(text)]
    assert quoted, "the test reads the audit's words"
    assert [q for q in quoted if q[2] != expression[q[1]]] == []
