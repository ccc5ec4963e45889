"""The notebook downloads on the Export page, the Stepper and the comparison page: offered,
parsed as notebooks, carrying the view's options (and the comparison page's normalization),
and unchanged in their code (apart from numbers) by whatever a link or a CSV tries to smuggle
in."""

from __future__ import annotations

import re

import nbformat
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

LESSON, EXERCISE = "Download as notebook", "Download the exercise notebook"
FILES = {
    f"{norm}_{kind}.ipynb": label
    for norm in ("layernorm", "batchnorm", "rmsnorm")
    for kind, label in (("lesson", LESSON), ("exercise", EXERCISE))
}
NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d+)?(e[+-]?\d+)?")
# An array's entries, however many: another shape changes only how many numbers it holds.
ENTRIES = re.compile(r"np\.array\(\[[-+\d.e,\s\[\]]*\]")


@pytest.fixture
def downloads(monkeypatch) -> dict:
    """The deferred downloads a run registers, by button label: what a click would write."""
    written: dict = {}
    register = MediaFileManager.add_deferred

    def spy(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        if file_name in FILES:
            written[FILES[file_name]] = data_callable
        return register(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", spy)
    return written


def _notebooks(downloads: dict) -> dict[str, nbformat.NotebookNode]:
    found = {label: nbformat.reads(write(), as_version=4) for label, write in downloads.items()}
    for notebook in found.values():
        nbformat.validate(notebook)
    return found


def _code(notebook: nbformat.NotebookNode, numbers: bool = True) -> list[str]:
    sources = [c.source for c in notebook.cells if c.cell_type == "code"]
    if numbers:
        return sources
    return [NUMBER.sub("<number>", ENTRIES.sub("np.array([<numbers>]", s)) for s in sources]


def test_the_export_page_offers_both_notebooks_of_the_current_view(lab, downloads):
    lab.set_sidebar("seed", 3).open("Stepper")
    lab.open("Export and share")
    lab.assert_clean()
    labels = [b.label for b in lab.at.main.get("download_button")]
    assert LESSON in labels and EXERCISE in labels
    notebooks = _notebooks(downloads)
    assert set(notebooks) == {LESSON, EXERCISE}
    x = lab.state["x"]
    inputs_cell = _code(notebooks[LESSON])[0]
    assert repr(float(x.reshape(-1)[0])) in inputs_cell
    # The link back opens the view the student came from, as the page's own link does.
    for notebook in notebooks.values():
        assert "/stepper?" in notebook.cells[0].source and "seed=3" in notebook.cells[0].source
    assert any("= None  # TODO" in s for s in _code(notebooks[EXERCISE]))


def test_the_stepper_offers_the_notebooks_with_its_layer_options(lab, downloads):
    lab.open("Stepper")
    # Folded, the downloads are not even registered: a Next does not pay for them.
    assert not lab.at.main.get("download_button") and not downloads
    lab.state["jupyter_stepper"] = True  # the student opens the fold
    lab.widget("selectbox", "Affine parameters").set_value("gamma")
    lab.run()
    lab.assert_clean()
    notebooks = _notebooks(downloads)
    for notebook in notebooks.values():
        assert "\nbeta = None  # this layer has no beta" in _code(notebook)[0]
    # The option lives in the shared state, so the Export page's notebooks carry it too.
    downloads.clear()
    lab.open("Export and share")
    assert "\nbeta = None" in _code(_notebooks(downloads)[LESSON])[0]


# What each normalization's notebooks hold: its title, its axis line, a line of its own.
NORMALIZED = {
    "layer": ("LayerNorm", "axis = (-1,)", "\nsample_mean = np.mean(x, axis=axis"),
    "batch": ("BatchNorm", "axis = (0,)", "\nsample_mean = np.mean(x, axis=axis"),
    "rms": ("RMSNorm", "axis = (-1,)", "\nmean_sq = np.mean(sq_x, axis=axis"),
}


def test_the_comparison_page_offers_the_notebooks_of_the_normalization_it_shows(lab, downloads):
    lab.set_sidebar("shape_kind", "tokens").open("LayerNorm vs BatchNorm")
    assert not downloads
    lab.state["jupyter_batchnorm"] = True
    for norm, (title, axis, line) in NORMALIZED.items():
        downloads.clear()
        lab.widget("radio", "Normalize").set_value(norm)
        lab.run()
        lab.assert_clean()
        notebooks = _notebooks(downloads)
        assert set(notebooks) == {LESSON, EXERCISE}, norm
        for notebook in notebooks.values():
            assert title in notebook.cells[0].source, norm
            assert f"norm={norm}" in notebook.cells[0].source, norm  # the link back
            code = "\n".join(_code(notebook))
            assert f"\n{axis}  #" in code and line in code, norm
            # The page's rows: the B x L tokens as B * L vectors of D features.
            assert "\nx = np.array([[" in code and "[[[" not in code, norm
            assert ("sample_mean" in code) == (norm != "rms"), norm


HOSTILE_LINK = {
    "preset": '"); import os; os.system("echo owned")  #',
    "seed": "1; import os",
    "eps": "__import__('os')",
    "x": "1,2,__import__('os').system('id')",
    "gamma": "<script>alert(1)</script>",
    "affine": "both\nimport os",
    "hide": "[x](javascript:alert(1))",
}


def test_hostile_link_values_leave_the_notebooks_code_unchanged(lab, open_link, downloads):
    lab.open("Export and share")
    clean = {label: _code(nb) for label, nb in _notebooks(downloads).items()}
    downloads.clear()
    linked = open_link(HOSTILE_LINK)
    assert len(linked.state["link_problems"]) == len(HOSTILE_LINK)
    linked.open("Export and share")
    hostile = _notebooks(downloads)
    for label, notebook in hostile.items():
        # Every hostile value was refused, so even the numbers are the default view's.
        assert _code(notebook) == clean[label], label
        text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
        assert "<script>" not in text and "javascript:alert" not in text


@pytest.mark.parametrize(
    "csv",
    ["1,2,3\n4,5,7", "1,2,__import__('os')", "=cmd|' /C calc'!A0,1\n2,3", '1,"); import os #'],
    ids=["numbers", "python", "formula", "quote"],
)
def test_a_csv_changes_only_the_numbers_of_the_notebooks(lab, downloads, csv):
    lab.open("Export and share")
    clean = {label: _code(nb, numbers=False) for label, nb in _notebooks(downloads).items()}
    lab.open("Inputs")
    lab.at.text_area(key="csv_text").input(csv)
    lab.click("Use this CSV for x")  # the text arrives with the click (a form)
    downloads.clear()
    lab.open("Export and share")
    notebooks = _notebooks(downloads)
    for label, notebook in notebooks.items():
        assert _code(notebook, numbers=False) == clean[label], label
    # A CSV of numbers reaches the notebooks; any other is refused and x is kept.
    applied = "[4.0, 5.0, 7.0]" in _code(notebooks[LESSON])[0]
    assert applied == (csv == "1,2,3\n4,5,7")
