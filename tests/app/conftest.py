"""Shared setup for the AppTest tests of the Streamlit app.

pytest runs with --import-mode=importlib, so test modules cannot import this file: the helpers
reach them through the `lab` fixture, a fresh app already run once on its Overview page. The
repository root goes on sys.path so test modules can import ln_core (for the preset names).

Every test gets its own AppTest, so no test depends on another's session state. Exceptions in
the app are shown in full (client.showErrorDetails), so a failing assertion prints the app's
own traceback instead of Streamlit's redacted message.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.util import patch_config_options

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

APP = ROOT / "app.py"
PAGES = {
    "Overview": "pages/home/home.py",
    "Inputs": "pages/inputs/inputs.py",
    "Stepper": "pages/stepper/stepper.py",
    # The later pages, by the titles app.py gives them.
    "Jacobian": "pages/jacobian/jacobian.py",
    "Gradient check": "pages/gradcheck/gradcheck.py",
    "Derivation audit": "pages/audit/audit.py",
    "Check your derivation": "pages/derive/derive.py",
    "Residual block": "pages/residual/residual.py",
    "LayerNorm vs BatchNorm": "pages/batchnorm/batchnorm.py",
    "Export and share": "pages/export/export.py",
}
# The sidebar's widgets, each a view of a state key (ui.session.state.bound names it w_<key>_).
SIDEBAR_KINDS = ("selectbox", "radio", "text_input", "toggle")
# The columns of a wide table's phone form (ui/draw/tables.entries_frame).
PHONE_ENTRIES = ["row", "column", "value"]


class TypedField:
    """A sidebar number typed as text, read and set as the number it holds."""

    def __init__(self, widget: Any) -> None:
        self.widget = widget

    @property
    def value(self) -> int | float:
        text = self.widget.value
        return int(text) if text.lstrip("+-").isdigit() else float(text)

    def set_value(self, value: Any) -> TypedField:
        self.widget.set_value(value if isinstance(value, str) else repr(value))
        return self


class Lab:
    """An AppTest of app.py with the few moves these tests make, each followed by a run."""

    titles = tuple(PAGES)  # every page's title, in the navigation's order

    def __init__(self) -> None:
        self.at = AppTest.from_file(str(APP), default_timeout=60)
        self.run()

    # -- running and navigating -------------------------------------------------------------

    def run(self) -> Lab:
        self.at.run()
        return self

    def open(self, page: str) -> Lab:
        """Switch to a page by its title (a key of PAGES: Overview, Stepper, ...) and run it."""
        self.at.switch_page(PAGES[page])
        return self.run()

    @property
    def state(self) -> Any:
        return self.at.session_state

    def audit_picker(self, kind: str = "wide") -> str:
        """The key of the audit summary's table (kind "wide" or "phone") on the page now: it
        is named by the rows the table lists (ui.draw.audit_view.picker_keys)."""
        prefix = f"audit_pick_{kind}_"
        (key,) = [w.key for w in self.at._tree if str(getattr(w, "key", "")).startswith(prefix)]
        return key

    def step_to(self, number: int) -> Lab:
        """Put the stepper on step `number` through the shared state, as a link or a class's
        instructor does."""
        self.state["step"] = number
        return self.run()

    def move_to(self, number: int) -> Lab:
        """Step the Stepper as its browser part does: the step goes into the hidden control
        (pages/stepper/browser.py) and arrives with the next run."""
        self.state["w_step_browser"] = number
        return self.run()

    def walk(self) -> dict:
        """What the Stepper gave its browser part: the twenty steps (pages/stepper/walk.py),
        the drawings and the session's step."""
        (component,) = [
            e for e in self.at.main.get("bidi_component") if e.proto.id.endswith("stepper_walk")
        ] or self.at.main.get("bidi_component")
        proto = component.proto
        sent = json.loads(proto.json if proto.WhichOneof("data") == "json" else proto.mixed.json)
        # The steps and drawings come as one JSON text (pages/stepper/browser.py).
        return {**sent, **json.loads(sent.pop("walk"))}

    def shown_step(self) -> dict:
        """The walk's entry for the step the page opens on (the session's step)."""
        walked = self.walk()
        return walked["steps"][walked["step"] - 1]

    def step_numbers(self) -> np.ndarray:
        """The first numbers the Stepper shows at its step (every digit, as on hover)."""
        return np.array([float(v) for v in self.shown_step()["blocks"][0]["full"]])

    # -- widgets ------------------------------------------------------------------------------

    def sidebar(self, key: str) -> Any:
        """The sidebar widget for this state key (preset, shape_kind, n, d, seed, eps, dtype...).

        Number fields come as TypedField: their value is the number, set_value takes one.
        """
        for kind in SIDEBAR_KINDS:
            for widget in getattr(self.at.sidebar, kind):
                if widget.key == f"w_{key}_":
                    return TypedField(widget) if kind == "text_input" else widget
        raise AssertionError(f"no sidebar widget with key {key!r}")

    def set_sidebar(self, key: str, value: Any) -> Lab:
        self.sidebar(key).set_value(value)
        return self.run()

    def widget(self, kind: str, label: str) -> Any:
        """The widget of this kind (button, slider, radio, ...) in the main area, by label."""
        found = [w for w in getattr(self.at.main, kind) if w.label == label]
        if not found and kind == "number_input":  # numbers are typed into text fields
            found = [TypedField(w) for w in self.at.main.text_input if w.label == label]
        assert found, f"no {kind} labelled {label!r} on the page"
        return found[0]

    def click(self, label: str) -> Lab:
        self.widget("button", label).click()
        return self.run()

    # -- what is shown ------------------------------------------------------------------------

    def desk_tables(self) -> list:
        """The tables (dataframes and data editors) of the main area as a desk shows them: a
        wide table's phone form (one row per number) is left out."""
        return [f for f in self.at.main.dataframe if list(f.value.columns) != PHONE_ENTRIES]

    def table(self, index: int = 0) -> np.ndarray:
        """The values of the index-th table in the main area, as a desk shows it; on the
        Stepper, its step's value or gradient for every vector (every digit, as on hover)."""
        if index == 0 and self.at.main.get("bidi_component"):
            return np.array(self.shown_step()["rows"]["table"]["full"], dtype=float)
        frames = self.desk_tables()
        assert len(frames) > index, f"only {len(frames)} tables on the page"
        return frames[index].value.to_numpy()

    def editor_key(self, name: str) -> str:
        return f"editor_{name}_{self.state['editor_version']}"

    def shown(self, name: str) -> pd.DataFrame:
        """The text the wide data editor for `name` (x, params, target, dout) shows: one row
        per vector, its numbers to a few significant digits."""
        return self._editor(self.editor_key(name)).value

    def editor(self, name: str) -> np.ndarray:
        """The numbers the data editors for `name` hold, rows of D like the wide table.

        The editors hold text (so a browser never rewrites a typed number); the phone's table
        shows every digit, each read back as the float its text spells.
        """
        wide = self.shown(name)
        phone = self._editor(f"phone_{self.editor_key(name)}").value
        return phone["value"].to_numpy().astype(np.float64).reshape(wide.shape)

    def _editor(self, key: str):
        found = [e for e in self.at.data_editor if e.key == key]
        assert found, f"no data editor {key!r}; editors: {[e.key for e in self.at.data_editor]}"
        return found[0]

    def edit(self, name: str, edited_rows: dict[int, dict[str, Any]]) -> Lab:
        """Edit cells of the data editor for `name` as the browser would, then run.

        edited_rows maps a row position to {column name: new value}; the columns of the
        vector tables are named "0".."D-1".
        """
        self.state[self.editor_key(name)] = {
            "edited_rows": edited_rows,
            "added_rows": [],
            "deleted_rows": [],
        }
        return self.run()

    def errors(self, where: str = "all") -> list[str]:
        """The st.error messages in the sidebar, the main area, or both ("all")."""
        area = self.at if where == "all" else getattr(self.at, where)
        return [e.value for e in area.error]

    def warnings(self) -> list[str]:
        return [w.value for w in self.at.main.warning]

    def subheaders(self) -> list[str]:
        return [h.value for h in self.at.main.header]

    def expanders(self) -> list[str]:
        """The labels of the main area's expanders (open or folded)."""
        return [e.label for e in self.at.main.expander]

    @staticmethod
    def differ(before: np.ndarray, after: np.ndarray) -> bool:
        """True if two shown tables hold different numbers (or have different shapes)."""
        return before.shape != after.shape or not np.array_equal(before, after)

    # -- assertions ---------------------------------------------------------------------------

    def assert_no_exception(self) -> None:
        if self.at.exception:
            details = [e.message + "\n" + "\n".join(e.stack_trace) for e in self.at.exception]
            pytest.fail("the app raised:\n" + "\n\n".join(details))

    def assert_clean(self) -> None:
        """No exception and no st.error anywhere on the page."""
        self.assert_no_exception()
        if self.at.error:
            pytest.fail(f"unexpected st.error: {self.errors()}")

    # -- figures, metrics and the link (used by the page, link and classroom tests) ----------

    def charts(self) -> list[dict[str, Any]]:
        """The plotly charts in the main area, each as its figure spec (data and layout)."""
        return [json.loads(chart.proto.spec) for chart in self.at.main.get("plotly_chart")]

    def heatmaps(self) -> list[dict[str, Any]]:
        """The charts whose first trace is a heatmap."""
        return [c for c in self.charts() if c["data"] and c["data"][0].get("type") == "heatmap"]

    @staticmethod
    def spec_array(value: Any) -> np.ndarray:
        """A plotly spec's array: a plain list, or plotly's {"dtype", "bdata", "shape"} form."""
        if not isinstance(value, dict):
            return np.asarray(value)
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape is None:
            return flat.copy()
        return flat.reshape([int(n) for n in str(shape).split(",")]).copy()

    def graphs(self) -> list[str]:
        """The DOT sources of the graphviz charts on the page, in page order."""
        return [chart.proto.spec for chart in self.at.main.get("graphviz_chart")]

    def graph(self) -> str:
        """The DOT source of the page's first graphviz chart (the stepper's whole graph)."""
        charts = self.graphs()
        assert charts, "no graphviz chart on the page"
        return charts[0]

    def html(self) -> list[str]:
        """The bodies of every st.html on the page (style-only ones included)."""
        return [element.value for element in self.at.get("html")]

    def metrics(self) -> dict[str, str]:
        """The main area's st.metric values by label."""
        return {m.label: m.value for m in self.at.main.metric}

    def link(self) -> dict[str, str]:
        """The query parameters the app wrote on its last run: the shareable link."""
        return {key: str(value) for key, value in self.at.query_params.items()}


class LinkedLab(Lab):
    """A fresh app opened from a link: the query parameters are set before the first run."""

    def __init__(self, params: Mapping[str, str]) -> None:
        self.at = AppTest.from_file(str(APP), default_timeout=60)
        self.at.query_params.update(params)
        self.run()


@pytest.fixture
def lab() -> Iterator[Lab]:
    """A fresh app, run once on its default page (Overview) with the default inputs."""
    with patch_config_options({"client.showErrorDetails": "full"}):
        yield Lab()


@pytest.fixture
def open_link() -> Iterator[Callable[[Mapping[str, str]], Lab]]:
    """Open a fresh app from a link: open_link({"seed": "3", ...}) gives a Lab run once."""
    with patch_config_options({"client.showErrorDetails": "full"}):
        yield LinkedLab
