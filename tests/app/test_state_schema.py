"""ui.session.state.SCHEMA: every session key is registered, with one rule per kind of widget."""

from __future__ import annotations

import pytest

from ui.session import state


def _unregistered(lab) -> list[str]:
    return sorted(key for key in lab.state.keys() if not state.registered(key))


@pytest.mark.parametrize(
    "setup",
    [
        {},
        {"preset": "Token batch (B x L x D)", "presenter": True, "quiz": True},
        {"shape_kind": "vector", "upstream": "loss"},
    ],
    ids=["defaults", "tokens, presenter, quiz", "vector, loss"],
)
def test_every_key_a_session_holds_is_registered(lab, setup):
    for key, value in setup.items():
        lab.state[key] = value
    lab.run()
    for page in lab.titles:
        lab.open(page)
        lab.assert_no_exception()
        if page == "Stepper":
            for number in (1, 11, 20):
                lab.step_to(number)
        assert _unregistered(lab) == [], page


def test_a_fresh_session_holds_every_default():
    fresh = {k: v.default for k, v in state.SCHEMA.items() if v.default is not None}
    assert {"preset", "d", "eps", "upstream", "step", "link_problems"} <= set(fresh)


def test_every_sidebar_key_is_drawn_as_a_view_of_its_state_key(lab):
    """The one rule: a control's widget is w_<key>_, and its state key holds the value."""
    drawn = {
        w.key
        for kind in ("selectbox", "radio", "text_input", "toggle")
        for w in getattr(lab.at.sidebar, kind)
    }
    shown = {"tokens": ("b", "l"), "rows": ("n",), "vector": ()}[lab.state["shape_kind"]]
    hidden_by_shape = {"b", "l", "n"} - set(shown)
    for key in state.SIDEBAR_KEYS:
        if key not in hidden_by_shape:
            assert f"w_{key}_" in drawn, key
        assert lab.state[key] == state.SCHEMA[key].default, key


@pytest.mark.parametrize("kind", list(state.Persist))
def test_every_kind_of_key_is_used_and_explained(kind):
    keys = [k for k, v in {**state.SCHEMA, **state.FAMILIES}.items() if v.persist is kind]
    assert keys, kind
    assert all(state.SCHEMA.get(k, state.FAMILIES.get(k)).meaning for k in keys)


TYPED_TEXT = {"derive_formula"}


@pytest.mark.parametrize(
    "key",
    [
        k
        for k, v in state.SCHEMA.items()
        if v.persist in (state.Persist.SIDEBAR, state.Persist.PAGE)
    ],
)
def test_every_key_a_widget_writes_has_a_check_its_default_passes(key):
    spec = state.SCHEMA[key]
    assert spec.valid is not None, f"{key}: a widget writes it, so its values need a check"
    assert spec.valid(spec.default) == spec.default
    # A typed formula is any text: "Nope" is one, and the page says it does not read.
    words = () if key in TYPED_TEXT else ("Nope",)
    for hostile in (*words, None, [], {"a": 1}, 1e300):
        with pytest.raises(ValueError):
            spec.valid(hostile)
