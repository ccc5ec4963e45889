"""Every later page renders its main result at the defaults, and on bad input shows the error
where it happens while the rest of the page and the app stay drawn."""

from __future__ import annotations

import pytest

LATER_PAGES = (
    "Jacobian",
    "Gradient check",
    "Derivation audit",
    "Residual block",
    "LayerNorm vs BatchNorm",
    "Export and share",
)


CONSTANT = "Constant vector"


def _what_each_page_draws(lab, page: str) -> None:
    """The main result of each page is on screen (not only its title)."""
    if page == "Jacobian":
        assert len(lab.heatmaps()) == 1
        assert {"max |J @ 1|", "dout @ J vs backward's dx"} <= set(lab.metrics())
    elif page == "Gradient check":
        assert lab.subheaders()[0].startswith("The staged backward passes")
        assert lab.at.main.selectbox(key="w_bug_").value == "none"  # no bug until one is picked
    elif page == "Derivation audit":
        assert len(lab.at.main.dataframe) == 2  # the summary, as the desk's and the phone's table
    elif page == "Residual block":
        assert set(lab.metrics()) == {"dx vs numerical", "dW vs numerical", "dc vs numerical"}
    elif page == "LayerNorm vs BatchNorm":
        assert len(lab.at.main.dataframe) == 1  # mean and variance per vector, one table
    else:
        assert [b.label for b in lab.at.main.get("download_button")] == [
            "JSON bundle",
            "Compressed .npz",
            "HTML report",
            "Download as notebook",
            "Download the exercise notebook",
        ]


@pytest.mark.parametrize("page", LATER_PAGES)
def test_later_page_runs_clean_at_default_inputs(lab, page):
    lab.open(page)
    lab.assert_clean()
    title = "Residual block (post-LN)" if page == "Residual block" else page
    assert [t.value for t in lab.at.main.title] == [title]
    _what_each_page_draws(lab, page)


def _constant_eps0(lab):
    lab.set_sidebar("preset", CONSTANT).set_sidebar("eps", 0.0)
    assert lab.state["eps"] == 0.0
    return lab


@pytest.mark.parametrize(
    ("page", "still_drawn"),
    [
        ("Jacobian", None),
        ("Gradient check", None),
        ("Derivation audit", None),
        ("LayerNorm vs BatchNorm", None),
        ("Export and share", ["Link to this view", "Download this example"]),
    ],
)
def test_zero_variance_with_eps_0_shows_an_error_and_the_rest_renders(lab, page, still_drawn):
    """The page stops at the failing inputs with one message; what came before stays."""
    _constant_eps0(lab).open(page)
    lab.assert_no_exception()
    errors = lab.errors("main")
    assert len(errors) == 1, f"{page}: {errors}"
    assert all("zero variance" in e for e in errors), errors
    assert lab.at.main.title, f"{page} lost its title"
    assert lab.sidebar("preset").value == CONSTANT, "the sidebar is not drawn"
    for heading in still_drawn or []:
        assert heading in lab.subheaders(), (heading, lab.subheaders())
    if page == "Export and share":
        assert "seed=" in lab.at.main.code[0].value  # the link does not need a defined output
        assert not lab.at.main.get("download_button")


def test_pages_with_an_entry_cap_refuse_a_large_token_batch(lab):
    lab.set_sidebar("shape_kind", "tokens")
    for key, value in (("b", 8), ("l", 16), ("d", 1024)):
        lab.set_sidebar(key, value)
    assert lab.state["x"].shape == (8, 16, 1024)
    caps = {
        "Gradient check": "4,096",
        "LayerNorm vs BatchNorm": "16,384",
        "Residual block": "1,024",
        "Derivation audit": "4,096",
        "Export and share": "4,096",
    }
    for page, cap in caps.items():
        lab.open(page)
        lab.assert_no_exception()
        errors = lab.errors("main")
        assert len(errors) == 1 and cap in errors[0], (page, errors)
        assert lab.at.main.title, f"{page} lost its title"
        assert lab.charts() == [], f"{page} drew charts past its cap"
