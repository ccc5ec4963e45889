"""The forward pass is plain code: its line tables agree with it, and nothing is interpreted.

The tables (ln_core.forward.LINES, ln_core.rmsnorm.RMS_LINES) are what the pages print and the
graph draws; the NumPy statements are what runs. These tests fail when the two drift apart.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re

import numpy as np
import pytest

import ln_core.forward
import ln_core.rmsnorm
import ln_core.staged
from ln_core.forward import LINES, NODE_INPUTS, NODE_NAMES, Cache, forward, run_nodes
from ln_core.rmsnorm import RMS_LINES, RMS_NODE_NAMES, RMSCache, rms_forward

INPUTS = ("x", "gamma", "beta", "eps")
FUNCTIONS = {"mean", "sqrt"}


def _pass():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 5)) * 2 + 0.5
    cache = forward(x, rng.normal(size=5), rng.normal(size=5), eps=1e-2)
    values = {"x": cache.x, "gamma": cache.gamma, "beta": cache.beta, **cache.nodes}
    return cache, values


def _bumped(value):
    # A change no node can round away: scale and shift every entry.
    return value * 1.25 + 0.5


@pytest.mark.parametrize("node", NODE_NAMES)
def test_each_node_reads_exactly_its_listed_inputs(node):
    """Recompute one node with one earlier value changed: it changes iff the table says so."""
    cache, values = _pass()
    position = NODE_NAMES.index(node)
    after = "x" if position == 0 else NODE_NAMES[position - 1]
    earlier = (*INPUTS, *NODE_NAMES[:position])
    for source in earlier:
        moved, eps = dict(values), cache.eps
        if source == "eps":
            eps = _bumped(eps)
        else:
            moved[source] = _bumped(values[source])
        result = run_nodes(moved, cache.axis, eps, after=after, through=node)
        changed = not np.array_equal(result[node], getattr(cache, node))
        assert changed == (source in NODE_INPUTS[node]), (node, source)


@pytest.mark.parametrize("node", NODE_NAMES)
def test_run_nodes_computes_only_the_nodes_asked_for(node):
    cache, values = _pass()
    position = NODE_NAMES.index(node)
    start = {name: values[name] for name in ("x", "gamma", "beta", *NODE_NAMES[:position])}
    after = "x" if position == 0 else NODE_NAMES[position - 1]
    result = run_nodes(start, cache.axis, cache.eps, after=after, through=node)
    assert set(result) == set(start) | {node}
    np.testing.assert_array_equal(result[node], getattr(cache, node))


@pytest.mark.parametrize("lines", [LINES, RMS_LINES], ids=["layernorm", "rmsnorm"])
def test_each_line_lists_the_names_its_text_reads(lines):
    known = set(INPUTS)
    for line in lines:
        names = re.findall(r"\b([A-Za-z_]\w*)\b", line.expression)
        assert tuple(n for n in names if n not in FUNCTIONS) == line.inputs, line.name
        assert set(line.inputs) <= known, line.name  # only inputs or earlier nodes
        known.add(line.name)


def test_rmsnorm_lines_match_its_nodes():
    rng = np.random.default_rng(4)
    x, gamma, beta = rng.normal(size=(2, 6)), rng.normal(size=6), rng.normal(size=6)
    cache = rms_forward(x, gamma, beta, eps=1e-3)
    assert tuple(cache.nodes) == RMS_NODE_NAMES
    mean_sq = np.mean(x**2, axis=-1, keepdims=True)
    np.testing.assert_array_equal(cache.mse, mean_sq + 1e-3)
    np.testing.assert_allclose(cache.out, gamma * x / np.sqrt(mean_sq + 1e-3) + beta, rtol=1e-14)
    assert cache.line("gx") == "gx = gamma * normalized_x"
    skipped = rms_forward(x, None, None, eps=1e-3)
    assert skipped.line("out") == "out = gx  (no beta)"
    assert skipped.skipped_in("gx") == ("gamma",)


@pytest.mark.parametrize(
    ("cls", "names"), [(Cache, NODE_NAMES), (RMSCache, RMS_NODE_NAMES)], ids=["cache", "rms"]
)
def test_caches_are_dataclasses_with_their_fields_written_out(cls, names):
    fields = tuple(f.name for f in dataclasses.fields(cls))
    assert fields == ("x", "gamma", "beta", "eps", "axis", *names)
    assert cls.__dataclass_params__.frozen
    source = inspect.getsource(cls)  # a class built at run time has no source to show
    for name in names:
        assert re.search(rf"^    {name}: np\.ndarray = field\(repr=False\)$", source, re.M), name


@pytest.mark.parametrize("module", [ln_core.forward, ln_core.rmsnorm, ln_core.staged])
def test_no_interpreter_in_the_staged_passes(module):
    tree = ast.parse(inspect.getsource(module))
    called = {
        node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    assert not called & {"eval", "exec", "compile", "make_dataclass", "type"}
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert not imported & {"make_dataclass", "re"}
