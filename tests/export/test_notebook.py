"""The notebooks as files: valid nbformat v4, the same bytes for the same view, only NumPy and
matplotlib imported, the view's options carried, and user text never reaching a code cell."""

from __future__ import annotations

import ast

import nbformat
import numpy as np
import pytest
from notebook_kit import code_cells, lab_view, markdown_cells, page_view, without_numbers

from ui.export.notebook import View, exercise_notebook, lesson_notebook

NORMS = ("layer", "batch")

BUILDERS = {"lesson": lesson_notebook, "exercise": exercise_notebook}
VIEWS = {
    "rows-float64": ("Random normal", "float64", "both", "token"),
    "classroom-float32-gamma": ("Classroom (D = 4, integers)", "float32", "gamma", "token"),
    "tokens-sequence-neither": ("Token batch (B x L x D)", "float64", "neither", "sequence"),
}
# The comparison page's views: its rows, normalized as BatchNorm or RMSNorm.
PAGE_VIEWS = {
    "batch-tokens-float32": ("Token batch (B x L x D)", "float32", "batch"),
    "rms-rows-float64": ("Random normal", "float64", "rms"),
}
HOSTILE = [
    '"); import os; os.system("echo owned")  #',
    "[click](javascript:alert(1)) <script>alert(1)</script> <img src=x onerror=alert(1)>",
    "**bold** _it_ `code` $x^2$ www.example.com http://evil.example\n# heading\n```\nprint(1)",
    "{x} {{x}} %(x)s \\ \u202e",
]


@pytest.fixture(params=[*VIEWS, *PAGE_VIEWS])
def view(request) -> View:
    if request.param in PAGE_VIEWS:
        return page_view(*PAGE_VIEWS[request.param])
    return lab_view(*VIEWS[request.param])


@pytest.mark.parametrize("kind", BUILDERS)
def test_the_notebook_is_valid_nbformat_4_with_stable_ids(view, kind):
    data = BUILDERS[kind](view)
    notebook = nbformat.reads(data, as_version=4)
    nbformat.validate(notebook)
    assert notebook.nbformat == 4
    ids = [cell.id for cell in notebook.cells]
    assert len(set(ids)) == len(ids)
    assert notebook.metadata.kernelspec.name == "python3"
    # The same view gives the same file, byte for byte (a rebuilt view included).
    assert BUILDERS[kind](view) == data
    assert BUILDERS[kind](View(view.inputs, view.preset, view.link, view.norm)) == data


@pytest.mark.parametrize("kind", BUILDERS)
def test_the_notebook_imports_only_numpy_matplotlib_and_json(view, kind):
    for source in code_cells(BUILDERS[kind](view)):
        lines = [line for line in source.splitlines() if not line.startswith("%")]
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.Import):
                assert {a.name for a in node.names} <= {"numpy", "json", "matplotlib.pyplot"}
            elif isinstance(node, ast.ImportFrom):
                raise AssertionError(f"from-import in {source}")


def test_a_different_view_gives_a_different_file():
    one = lesson_notebook(lab_view("Random normal", "float64"))
    assert lesson_notebook(lab_view("Random normal", "float32")) != one
    assert lesson_notebook(lab_view("Random normal", "float64", affine="gamma")) != one


def test_the_inputs_cell_holds_the_exact_inputs(view):
    inputs_cell = code_cells(lesson_notebook(view))[0]
    namespace: dict = {}
    exec(inputs_cell, namespace)  # our own generated code, run in a test
    i = view.inputs
    for name, expected in (("x", i.x), ("gamma", i.layer_gamma), ("beta", i.layer_beta)):
        if expected is None:
            assert namespace[name] is None
        else:
            assert namespace[name].dtype == expected.dtype
            np.testing.assert_array_equal(namespace[name], expected)
    np.testing.assert_array_equal(namespace["dout"], i.dout)
    assert namespace["eps"] == i.eps
    assert namespace["axis"] == view.axis


def test_the_options_are_carried_into_both_notebooks():
    for kind, build in BUILDERS.items():
        full = "\n".join(code_cells(build(lab_view("Random normal", "float64"))))
        no_beta = "\n".join(code_cells(build(lab_view("Random normal", "float64", "gamma"))))
        neither = "\n".join(
            code_cells(build(lab_view("Token batch (B x L x D)", "float64", "neither", "sequence")))
        )
        skipped = "\nbeta = None  # this layer has no beta"
        assert skipped not in full and skipped in no_beta, kind
        assert "\ngamma = None  # this layer has no gamma" in neither, kind
        assert "axis = (-2, -1)" in neither and "axis = (-1,)" in full, kind
        assert "dbeta" in full and "dbeta" not in no_beta, kind
        assert "\nout = gx\n" in no_beta and "\nout = gx + beta\n" in full, kind


def _cells(data: bytes) -> dict[str, str]:
    return {c.id: c.source for c in nbformat.reads(data, 4).cells if c.cell_type == "code"}


@pytest.mark.parametrize("kind", BUILDERS)
def test_batchnorm_is_the_layernorm_notebook_over_the_batch_axis(kind):
    layer, batch = (BUILDERS[kind](page_view("Random normal", "float64", n)) for n in NORMS)
    assert "BatchNorm" in markdown_cells(batch)[0] and "LayerNorm" in markdown_cells(layer)[0]
    layer_cells, batch_cells = _cells(layer), _cells(batch)
    assert list(layer_cells) == list(batch_cells)
    changed = {key for key in layer_cells if layer_cells[key] != batch_cells[key]}
    # Only the axis, the words on what a group is, and (lesson) the lab's check settings.
    # (backward-10 and -9 say in their hints that gamma and beta are per feature.)
    # (checks: the hints' words and the lab's gradients its checks start from.)
    words = {"sizes", "forward-sample_mean", "forward-sample_var", "checks"}
    words |= {"backward-10", "backward-9"}
    assert changed <= {"inputs", "check-settings", *words}, changed
    assert "inputs" in changed and "sizes" in changed
    inputs = batch_cells["inputs"].splitlines()
    assert [line for line in inputs if line not in layer_cells["inputs"].splitlines()] == [
        "axis = (0,)  # BatchNorm: a feature's N values, one per vector, share one mean"
    ]
    assert "\nshared = axis" in batch_cells["sizes"]


@pytest.mark.parametrize("kind", BUILDERS)
def test_rmsnorm_has_its_own_eight_lines_and_no_mean_node(kind):
    code = "\n".join(code_cells(BUILDERS[kind](page_view("Random normal", "float64", "rms"))))
    for line in (
        "\nsq_x = x ** 2\n",
        "\nmean_sq = np.mean(sq_x, axis=axis, keepdims=True)\n",
        "\nnormalized_x = x * inv_sqrt_mse\n",
    ):
        assert line in code, line
    assert "sample_mean" not in code and "x_sm" not in code and "sve" not in code
    if kind == "exercise":
        assert "dx_via_normalized_x = None  # TODO" in code
        assert "def undo_line_6(dnormalized_x):" in code and "\ncheck(undo_line_6)" in code
    else:
        assert "\ndx = dx_via_normalized_x + dx_via_sq_x" in code


def test_the_exercise_leaves_every_gradient_blank_and_checks_each():
    code = "\n".join(code_cells(exercise_notebook(lab_view("Random normal", "float64"))))
    for name in (
        "dgx",
        "dbeta",
        "dnormalized_x",
        "dgamma",
        "dinv_sqrt_sve",
        "dsqrt_sve",
        "dsve",
        "dsample_var",
        "dsq_xsm",
        "dx_sm",
        "dsample_mean",
        "dx",
    ):
        assert f"{name} = None  # TODO" in code, name
    for line in range(1, 11):
        assert f"\ncheck(undo_line_{line})" in f"\n{code}", line
    # No gradient formula of the lesson's backward pass is in the exercise.
    assert "np.sum(dout, axis=shared)" not in code
    assert "-1 / sqrt_sve**2" not in code


@pytest.mark.parametrize("hostile", HOSTILE)
@pytest.mark.parametrize("kind", BUILDERS)
def test_user_text_never_reaches_a_code_cell(kind, hostile):
    clean_view = lab_view("Random normal", "float64")
    clean = BUILDERS[kind](clean_view)
    for view in (
        View(clean_view.inputs, hostile, clean_view.link),
        View(clean_view.inputs, clean_view.preset, hostile),
        View(clean_view.inputs, clean_view.preset, f"http://localhost:8501/?{hostile}"),
    ):
        data = BUILDERS[kind](view)
        assert code_cells(data) == code_cells(clean)
        markdown = "\n".join(markdown_cells(data))
        for raw in ("<script>", "<img", "](javascript:", "**bold**", "\n# heading", "```"):
            assert raw not in markdown, raw
        nbformat.validate(nbformat.reads(data, 4))


def test_the_preset_name_shows_literally_and_the_link_is_a_link():
    view = lab_view("Random normal", "float64")
    title = markdown_cells(lesson_notebook(View(view.inputs, "a*b_[c]", view.link)))[0]
    assert "“a\\*b\\_\\[c\\]”" in title  # backslash-escaped: Markdown shows a*b_[c]
    assert f"[Open this view in LayerNorm Lab]({view.link})" in title
    not_web = markdown_cells(lesson_notebook(View(view.inputs, "x", "javascript:alert(1)")))[0]
    assert "javascript" not in not_web and "Open LayerNorm Lab" in not_web


def test_code_cells_change_only_in_their_numbers_with_other_inputs():
    one = code_cells(lesson_notebook(lab_view("Random normal", "float64")))
    other = code_cells(lesson_notebook(lab_view("One large outlier", "float64")))
    assert one != other
    assert [without_numbers(c) for c in one] == [without_numbers(c) for c in other]


def test_the_results_cell_prints_json_of_the_gradients():
    cells = code_cells(lesson_notebook(lab_view("Random normal", "float64", "gamma")))
    expected = 'print(json.dumps({"dx": dx.tolist(), "dgamma": dgamma.tolist()}))'
    assert cells[-1] == f"import json\n\n{expected}"


def test_the_exercise_opens_with_its_task_and_folds_its_checks():
    """Like micrograd's exercises: the first screen is the task; the checks' code, hints and
    the lab's gradients are one folded cell under the inputs, not 200 lines to scroll past."""
    cells = nbformat.reads(exercise_notebook(lab_view("Random normal", "float64")), 4).cells
    assert cells[0].cell_type == "markdown" and "**Your task.**" in cells[0].source
    assert cells[1].id == "inputs"
    checks = cells[2]
    assert checks.id == "checks" and checks.metadata["jupyter"]["source_hidden"]
    assert checks.metadata["cellView"] == "form" and checks.source.startswith("#@title ")
    assert "def judge(" in checks.source and "HINTS = {" in checks.source
    rest = "\n".join(c.source for c in cells[3:] if c.cell_type == "code")
    assert "def judge(" not in rest and "HINTS" not in rest


@pytest.mark.parametrize("kind", BUILDERS)
def test_the_link_says_where_the_lab_must_run(kind):
    """A link to this computer opens nothing in Colab: the notebook says so."""
    view = lab_view("Random normal", "float64")
    here = markdown_cells(BUILDERS[kind](view))[0]
    assert "It opens only where LayerNorm Lab runs on the same computer" in here
    assert "in Colab or on another computer, start the lab there" in here
    away = View(view.inputs, view.preset, "https://lab.example.edu/?seed=0")
    there = markdown_cells(BUILDERS[kind](away))[0]
    assert "It needs LayerNorm Lab running at that address." in there
