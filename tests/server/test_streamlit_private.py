"""The lab's reaches into Streamlit's private modules: all in ui.streamlit_private, each still
what the lab relies on in the installed Streamlit, and Streamlit pinned to their minor release.

Each test below checks one reach of ui.streamlit_private's docstring (by its number) for the
shape the lab uses: the names, the signatures it calls or wraps, the fields it reads. An
upgrade that changes one fails here with the reach named; what each does is tested where it
is used (the docstring says where).
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import fields
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import ui.streamlit_private as private
from ui.server import browser_messages
from ui.server.launch import PAGES_SWITCH

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ui" / "streamlit_private"
# What the rest of the app may import from streamlit besides `import streamlit as st`: types
# the documentation names as the return of public calls (st.container, st.Page).
PUBLIC = {"streamlit", "streamlit.delta_generator", "streamlit.navigation.page"}


def _signature(function: object) -> str:
    return str(inspect.signature(function))


def _app_files() -> list[Path]:
    files = [ROOT / "app.py", *(ROOT / "pages").rglob("*.py"), *(ROOT / "ui").rglob("*.py")]
    return [f for f in files if PACKAGE not in f.parents]


def _streamlit_modules(path: Path) -> list[str]:
    """Each module of streamlit the file imports: `from streamlit import dataframe_util` reaches
    streamlit.dataframe_util, `from streamlit import cache_data` only streamlit."""
    import streamlit

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "streamlit"]
        elif isinstance(node, ast.ImportFrom) and node.module == "streamlit":
            modules = [a.name for a in node.names if inspect.ismodule(getattr(streamlit, a.name))]
            found += ["streamlit", *(f"streamlit.{name}" for name in modules)]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streamlit."):
            found.append(node.module)
    return found


def test_only_the_package_reaches_into_streamlit() -> None:
    reaches = [
        f"{path.relative_to(ROOT)}: {module}"
        for path in _app_files()
        for module in _streamlit_modules(path)
        if module not in PUBLIC
    ]
    assert not reaches, "import these from ui.streamlit_private (and list them there):\n" + (
        "\n".join(reaches)
    )


def test_the_grep_of_the_issue_finds_only_the_package() -> None:
    pattern = re.compile(r"streamlit\.runtime|streamlit\.web")
    hits = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _app_files()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not hits, hits


def test_every_reach_is_listed_in_the_docstring() -> None:
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    imports = [node for node in tree.body if isinstance(node, ast.ImportFrom)]
    imported = {alias.asname or alias.name for node in imports for alias in node.names}
    assert imported == set(private.__all__)
    doc = private.__doc__ or ""
    for name in imported:
        assert re.search(rf"\b{name}\b", doc), f"{name} is imported but not explained"
    for module in {node.module for node in imports} - {"streamlit"}:
        assert module in doc, f"{module} is reached but not named in the docstring"


def test_requirements_pin_streamlit_to_the_minor_release_of_the_reaches() -> None:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    wanted = [Requirement(line.split("#")[0]) for line in lines if line.startswith("streamlit")]
    installed = Version(metadata.version("streamlit"))
    minor = f"{installed.major}.{installed.minor}"
    next_minor = f"{installed.major}.{installed.minor + 1}"
    assert [r.specifier for r in wanted] == [SpecifierSet(f">={minor},<{next_minor}")], (
        f"requirements.txt must pin streamlit>={minor},<{next_minor}, the release whose "
        "internals ui.streamlit_private was checked against"
    )


def test_reach_1_the_pages_folder_switch() -> None:
    from streamlit.runtime import pages_manager

    assert private.PagesManager is pages_manager.PagesManager
    assert hasattr(private.PagesManager, PAGES_SWITCH), (
        f"Streamlit {metadata.version('streamlit')} has no PagesManager.{PAGES_SWITCH}: "
        "ui/server/launch.py can no longer keep a fresh server out of the pages-folder mode"
    )
    # The attribute must still be what decides the mode, read before the first run.
    source = Path(pages_manager.__file__).read_text()
    assert f"PagesManager.{PAGES_SWITCH} is None" in source, (
        f"PagesManager.{PAGES_SWITCH} no longer decides the pages-folder mode"
    )


def test_reach_2_widget_states() -> None:
    assert {f.name for f in fields(private.WStates)} >= {"states", "widget_metadata"}
    # Streamlit's own methods, which ui.server.browser_messages wraps and calls.
    assert _signature(browser_messages._read) == "(self, k: 'str') -> 'Any'"
    assert _signature(browser_messages._store) == (
        "(self, widget_state: 'WidgetStateProto') -> 'None'"
    )
    assert private.WStates.__getitem__ is browser_messages.read_or_forget
    assert private.WStates.set_widget_from_proto is browser_messages.store_if_widget
    assert [f.name for f in fields(private.Serialized)] == ["value"]
    assert "value_type" in {f.name for f in fields(private.WidgetMetadata)}
    assert _signature(private.is_element_id) == "(key: 'str') -> 'bool'"
    state = private.WidgetState(id="w", int_value=3)
    assert state.WhichOneof("value") == "int_value"


def test_reach_3_clear_cache() -> None:
    from streamlit.runtime import app_session

    # A browser's "clear_cache" still reaches the method browser_messages replaced.
    source = Path(app_session.__file__).read_text()
    assert re.search(r'"clear_cache":\s+self\._handle_clear_cache_request\(\)', source)
    replaced = private.AppSession._handle_clear_cache_request
    assert replaced is browser_messages.ignore_clear_cache


def test_reach_4_a_rerun_started_by_the_server() -> None:
    assert _signature(private.AppSession.request_rerun) == (
        "(self, client_state: 'ClientState | None') -> 'None'"
    )
    assert _signature(private.Runtime.instance) == "() -> 'Runtime'"
    assert _signature(private.Runtime.exists) == "() -> 'bool'"
    assert _signature(private.Runtime.get_app_session) == (
        "(self, session_id: 'str') -> 'AppSession | None'"
    )
    assert isinstance(private.Runtime.stopped, property)
    rerun = private.ClientState(page_script_hash="p", query_string="q", fragment_id="f")
    assert rerun.HasField("context_info") is False


def test_reach_5_the_run_context() -> None:
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    assert _signature(private.get_script_run_ctx) == (
        "(suppress_warning: 'bool' = False) -> 'ScriptRunContext | None'"
    )
    names = {f.name for f in fields(ScriptRunContext)}
    assert {"session_id", "query_string", "context_info", "fragment_ids_this_run"} <= names
    assert isinstance(ScriptRunContext.page_script_hash, property)


def test_reach_6_the_running_fragment() -> None:
    from streamlit.runtime.scriptrunner_utils.script_run_context import FragmentThreadState

    assert _signature(private.ThreadState.get) == "() -> 'FragmentThreadState'"
    assert "fragment_id" in {f.name for f in fields(FragmentThreadState)}


def test_reach_7_the_arrow_conversion() -> None:
    convert = private.dataframe_util.convert_anything_to_arrow_bytes
    assert next(iter(inspect.signature(convert).parameters)) == "data"


def test_reach_8_a_key_drawn_twice_in_one_run() -> None:
    from streamlit.testing.v1 import AppTest

    script = """
import streamlit as st
from ui.streamlit_private import StreamlitDuplicateElementKey
st.button("a", key="twice")
try:
    st.button("a", key="twice")
except StreamlitDuplicateElementKey:
    st.write("caught")
"""
    at = AppTest.from_string(script).run()
    assert not at.exception, at.exception
    assert [m.value for m in at.markdown] == ["caught"]
