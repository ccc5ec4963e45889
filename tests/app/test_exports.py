"""Exports: the bundle and its four formats (JSON, .npz, NumPy snippet, HTML report), and the
Export and share page that offers them."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

from ln_core.forward import NODE_NAMES
from pages.export.report import html_report
from ui.export.bundle import make_bundle, numpy_snippet, to_json, to_npz

SHAPES = [(4,), (2, 4), (1, 2, 3)]
DTYPES = ["float64", "float32"]
INPUTS = ("x", "gamma", "beta", "dout")


def _inputs(shape: tuple[int, ...], dtype: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(len(shape))
    d = shape[-1]
    return {
        "x": rng.standard_normal(shape).astype(dtype),
        "gamma": rng.standard_normal(d).astype(dtype),
        "beta": rng.standard_normal(d).astype(dtype),
        "dout": rng.standard_normal(shape).astype(dtype),
    }


@pytest.fixture(params=[(s, d) for s in SHAPES for d in DTYPES], ids=lambda p: f"{p[0]}-{p[1]}")
def example(request):
    shape, dtype = request.param
    inputs = _inputs(shape, dtype)
    return inputs, make_bundle(**inputs, eps=1e-5)


def test_bundle_holds_the_inputs_every_node_and_every_gradient(example):
    inputs, bundle = example
    for name in INPUTS:
        np.testing.assert_array_equal(bundle.arrays[f"inputs/{name}"], inputs[name])
    for node in NODE_NAMES:
        assert f"nodes/{node}" in bundle.arrays and f"grads/d{node}" in bundle.arrays
    assert bundle.meta["shape"] == list(inputs["x"].shape)
    assert bundle.meta["dtype"] == inputs["x"].dtype.name
    assert bundle.meta["verdict"] == "pass"


def test_json_round_trips(example):
    inputs, bundle = example
    loaded = json.loads(to_json(bundle))
    assert set(loaded) == {"meta", "arrays"}
    assert set(loaded["arrays"]) == set(bundle.arrays)
    for name in INPUTS:
        np.testing.assert_array_equal(np.array(loaded["arrays"][f"inputs/{name}"]), inputs[name])
    for name, array in bundle.arrays.items():
        np.testing.assert_array_equal(np.array(loaded["arrays"][name]).reshape(array.shape), array)
    assert loaded["meta"]["eps"] == 1e-5
    assert loaded["meta"]["verdict"] == bundle.meta["verdict"]
    assert loaded["meta"]["relative_errors"] == bundle.meta["relative_errors"]


def test_npz_loads_with_the_same_arrays(example):
    _, bundle = example
    with np.load(io.BytesIO(to_npz(bundle)), allow_pickle=False) as npz:
        assert set(npz.files) == {n.replace("/", "__") for n in bundle.arrays} | {"meta"}
        for name, array in bundle.arrays.items():
            loaded = npz[name.replace("/", "__")]
            assert loaded.dtype == array.dtype, name
            np.testing.assert_array_equal(loaded, array, err_msg=name)
        assert json.loads(str(npz["meta"]))["shape"] == bundle.meta["shape"]


def test_numpy_snippet_rebuilds_the_inputs(example, capsys):
    inputs, bundle = example
    namespace: dict = {}
    exec(numpy_snippet(bundle), namespace)  # our own generated code, run in a test
    for name in INPUTS:
        rebuilt = namespace[name]
        assert rebuilt.dtype == inputs[name].dtype, name
        np.testing.assert_array_equal(rebuilt, inputs[name], err_msg=name)
    assert namespace["eps"] == 1e-5
    np.testing.assert_array_equal(namespace["dx"], bundle.arrays["grads/dx"])
    assert capsys.readouterr().out  # it prints out and dx


def test_html_report_is_self_contained_and_names_every_node(example):
    inputs, bundle = example
    report = html_report(bundle)
    assert report.startswith("<!DOCTYPE html>")
    assert "<script" not in report.lower()
    assert not re.search(r"https?://", report), "the report references an external file"
    assert not re.search(r"\b(src|href)\s*=", report, re.IGNORECASE)
    headings = re.findall(r"<h3>([^<]*)</h3>", report)
    for node in NODE_NAMES:
        assert node in headings, f"node {node} missing"
        assert f"d{node}" in headings, f"gradient d{node} missing"
    for name in ("x", "gamma", "beta", "dout", "dx", "dgamma", "dbeta"):
        assert name in headings, name
    assert f"{float(inputs['x'].reshape(-1)[0]):.6g}" in report
    assert "passes" in report


def test_html_report_shows_a_failing_check_as_failing(example):
    _, bundle = example
    headline = "The staged backward FAILS"
    failing = type(bundle)(bundle.arrays, {**bundle.meta, "verdict": "fail", "headline": headline})
    assert f"<b class='fail'>{headline}</b>" in html_report(failing)


# -- the Export and share page --------------------------------------------------------------------


def test_html_report_says_when_the_check_cannot_resolve():
    # D = 2 with eps = 0: dx is exactly 0, below what central differences resolve.
    x = np.array([[0.0, 3.0], [1.0, -1.0]])
    bundle = make_bundle(x, np.ones(2), np.zeros(2), np.array([[1.0, -2.0], [0.5, 2.0]]), 0.0)
    # Nothing fails, yet nothing claims a pass: the page's own headline.
    assert bundle.meta["verdict"] == "cannot resolve"
    assert "does not fail; dx: cannot resolve" in html_report(bundle)
    assert "passes" not in html_report(bundle)
    (advice,) = bundle.meta["cannot_resolve"]
    assert advice.startswith("dx: Cannot resolve: ")
    report = html_report(bundle)
    assert "dx: Cannot resolve: " in report
    assert json.loads(to_json(bundle))["meta"]["cannot_resolve"] == [advice]
    # The table says it beside dx's relative error, which here is round-off against round-off.
    (row,) = re.findall(r"<tr><td>backward</td>(.*?)</tr>", report)
    assert re.findall(r"\((pass|fail|cannot resolve)\)", row) == ["cannot resolve", "pass", "pass"]


def test_html_report_heads_only_the_tensors_it_checked():
    """Without gamma and beta only dx is checked: the table had three headings over one cell."""
    rng = np.random.default_rng(0)
    x, dout = rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    report = html_report(make_bundle(x, None, None, dout))
    (table,) = re.findall(r"<h2>Gradient check \(relative error\)</h2><table>(.*?)</table>", report)
    assert re.findall(r"<th>([^<]*)</th>", table) == ["", "dx"]
    assert all(row.count("<td>") == 2 for row in re.findall(r"<tr><td>.*?</tr>", table))


def _link_and_snippet(lab) -> tuple[str, str]:
    """The Export page's link to the view, and its NumPy snippet (the Python code block)."""
    codes = list(lab.at.main.code)
    return codes[0].value, next(c.value for c in codes if c.language == "python")


def test_export_page_offers_the_downloads_a_link_and_a_snippet_of_the_current_inputs(lab):
    lab.set_sidebar("seed", 6).set_sidebar("dtype", "float32").open("Export and share")
    lab.assert_clean()
    buttons = lab.at.main.get("download_button")
    assert [b.label for b in buttons] == [
        "JSON bundle",
        "Compressed .npz",
        "HTML report",
        "Download as notebook",
        "Download the exercise notebook",
    ]
    # The files are deferred: written on click, so the page run itself stays fast. A click
    # only fetches the file: a rerun would cost a full page and could revoke the file the
    # click is fetching before it is written.
    assert all(b.proto.deferred_file_id and not b.proto.url for b in buttons)
    assert all(b.proto.ignore_rerun for b in buttons)

    link, snippet = _link_and_snippet(lab)
    assert "seed=6" in link and "dtype=float32" in link
    assert link.startswith("http")

    namespace: dict = {}
    exec(snippet, namespace)
    s = lab.state
    np.testing.assert_array_equal(namespace["x"], s["x"].astype(np.float32))
    np.testing.assert_array_equal(namespace["gamma"], s["gamma"].astype(np.float32))
    np.testing.assert_array_equal(namespace["dout"], s["dout_random"].astype(np.float32))
    assert namespace["x"].dtype == np.float32
    assert namespace["eps"] == s["eps"]


def test_export_snippet_and_link_follow_the_seed(lab):
    lab.open("Export and share")
    link, snippet = _link_and_snippet(lab)
    assert "seed=0" in link
    lab.set_sidebar("seed", 4)
    lab.assert_clean()
    new_link, new_snippet = _link_and_snippet(lab)
    assert "seed=4" in new_link
    assert new_snippet != snippet


# -- every export follows the view's layer options, as the Stepper shows them ---------------------

OPTIONS = [
    (affine, per, dtype)
    for affine in ("both", "gamma", "neither")
    for per in ("token", "sequence")
    for dtype in DTYPES
]


@pytest.mark.parametrize(("affine", "per", "dtype"), OPTIONS, ids=lambda p: p)
def test_every_export_gives_the_steppers_numbers_with_the_views_options(
    open_link, affine, per, dtype
):
    link = {"shape": "tokens", "b": "2", "l": "3", "d": "4", "seed": "3", "step": "20"}
    lab = open_link({**link, "affine": affine, "per": per, "dtype": dtype})
    lab.open("Stepper")
    lab.assert_clean()
    # The result panel ends the page: dx of the chosen token (per sequence: its whole
    # sequence), then the table of dgamma and dbeta unless the layer applies neither.
    frames = [frame.value for frame in lab.desk_tables()]
    shown_dx, params = (frames[-2], frames[-1]) if affine != "neither" else (frames[-1], None)
    shown_dx = shown_dx.to_numpy().reshape(-1)
    lab.open("Export and share")
    lab.assert_clean()
    snippet = next(c.value for c in lab.at.main.code if c.language == "python")
    namespace: dict = {}
    exec(snippet, namespace)  # our own generated code, run in a test
    chosen = (0,) if per == "sequence" else (0, 0)
    tolerance = {"float64": 1e-12, "float32": 1e-5}[dtype]
    np.testing.assert_allclose(namespace["dx"][chosen].reshape(-1), shown_dx, tolerance, tolerance)
    for name in ("dgamma", "dbeta"):
        applied = {"dgamma": affine != "neither", "dbeta": affine == "both"}[name]
        assert (name in namespace) == applied, name
        if applied:
            np.testing.assert_allclose(
                namespace[name].reshape(-1), params.loc[name].to_numpy(), rtol=tolerance
            )
    assert namespace["x"].dtype == np.dtype(dtype)

    # The files are written from the same bundle the snippet is: rebuild it from its inputs.
    gamma = namespace.get("gamma")
    bundle = make_bundle(
        namespace["x"], gamma, namespace.get("beta"), namespace["dout"], 1e-5, namespace["axis"]
    )
    assert (bundle.meta["affine"], bundle.meta["per"], bundle.meta["dtype"]) == (affine, per, dtype)
    loaded = json.loads(to_json(bundle))
    assert loaded["meta"]["affine"] == affine and loaded["meta"]["per"] == per
    saved_dx = np.array(loaded["arrays"]["grads/dx"])[chosen].reshape(-1)
    np.testing.assert_allclose(saved_dx, shown_dx, tolerance)
    np.testing.assert_array_equal(np.array(loaded["arrays"]["nodes/out"]), namespace["out"])
    with np.load(io.BytesIO(to_npz(bundle)), allow_pickle=False) as npz:
        np.testing.assert_array_equal(npz["grads__dx"], namespace["dx"])
        assert ("grads__dgamma" in npz.files) == (affine != "neither")
        assert json.loads(str(npz["meta"]))["per"] == per
    report = html_report(bundle)
    assert f"normalized per {per}" in report
    assert f"{float(namespace['out'].reshape(-1)[-1]):.6g}" in report
    assert ("<h3>dbeta</h3>" in report) == (affine == "both")
