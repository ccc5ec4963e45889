"""Every reach into Streamlit's private modules, in one place: the rest of the lab imports them
from here, never from streamlit.runtime, streamlit.proto, streamlit.dataframe_util (or
streamlit.web, which it no longer needs: ui.server.launch runs `python -m streamlit`, the way
Streamlit's maintainers support, streamlit/streamlit#5471).

None of these is Streamlit's public API, so requirements.txt pins Streamlit to the one minor
release they were read in (constraints.txt, the exact version), and
tests/server/test_streamlit_private.py checks each reach below against the installed Streamlit:
an upgrade that renames, removes or reshapes one fails there, naming it, before anything runs.
The behaviour behind each is tested where it is used (the tests named below).

1. PagesManager.uses_pages_directory (streamlit.runtime.pages_manager), set to False by
   ui.server.launch before the server starts. Why: a pages/ folder beside app.py puts a fresh
   server in the legacy pages-folder mode until one run reaches st.navigation, and a link to a
   page opened before then shows "Page not found". No setting or public call declares an app
   navigation-based. Upstream: streamlit/streamlit#8860 and #9992 (the dialog on a first deep
   link with st.navigation); the flag's comment in streamlit/streamlit#10276 calls it a relic
   kept for apps with a pages folder. Tested: tests/server/test_cold_start.py.
2. WStates.__getitem__, WStates.set_widget_from_proto and their fields states and
   widget_metadata, Serialized.value (streamlit.runtime.state.session_state),
   WidgetMetadata.value_type and is_element_id (streamlit.runtime.state.common), the WidgetState
   message (streamlit.proto.WidgetStates_pb2), wrapped by ui.server.browser_messages. Why:
   Streamlit decodes a browser's widget message with the widget's own deserializer before any
   of the lab's code runs, and a hand-built message of the wrong kind breaks the session for
   good; there is no hook at that point. Upstream: none found (streamlit/streamlit#3319,
   "Decouple widget deserializers from the widget data class", is the nearest, open).
   Tested: tests/server/test_browser_messages.py, tests/app/test_bad_input_matrix.py.
3. AppSession._handle_clear_cache_request (streamlit.runtime.app_session), replaced by
   ui.server.browser_messages. Why: any browser may send "clear_cache", which empties the
   caches every session shares; no setting refuses the message (client.toolbarMode only hides
   the menu item). Upstream: none found. Tested: tests/server/test_browser_messages.py.
4. Runtime.instance(), Runtime.exists(), Runtime.get_app_session(), Runtime.stopped
   (streamlit.runtime), AppSession.request_rerun (streamlit.runtime.app_session) and the
   ClientState message (streamlit.proto.ClientState_pb2), used by ui.live.wake. Why: no public
   call starts a session's run from the server; request_rerun with the ClientState a browser
   would send is what Streamlit's own run-on-save does. Upstream: streamlit/streamlit#2838
   ("Trigger a script re-run from another thread", open). Tested:
   tests/server/test_class_wakeups.py, tests/live/test_wake.py.
5. get_script_run_ctx (streamlit.runtime.scriptrunner) and its session_id, page_script_hash,
   query_string and context_info, used by ui.live.wake, and its fragment_ids_this_run, used
   by ui.session.state. Why: a run's session id and the ClientState that reruns its page have
   no public accessor (st.context has neither), nor has the set of fragments a run reruns
   (a widget's old value sent with another fragment's run is told apart by it). Upstream:
   none found. Tested: tests/server/test_class_wakeups.py.
6. ThreadState.get().fragment_id (streamlit.runtime.scriptrunner_utils.script_run_context),
   used by ui.live.wake and ui.session.state. Why: the id of the fragment running now, which a
   wake-up names to rerun that fragment alone, and in which a bound widget is drawn;
   st.fragment does not expose it. Upstream: none found. Tested:
   tests/server/test_class_wakeups.py.
7. dataframe_util.convert_anything_to_arrow_bytes (streamlit.dataframe_util), called by
   ui.server.warmup. Why: it rehearses, before any session runs, the Arrow conversion
   st.dataframe makes on first use, which outside a run no public call reaches. Upstream: none
   (a warm-up, not a missing feature). Tested: tests/server/test_warmup.py.
8. StreamlitDuplicateElementKey (streamlit.errors), caught by ui.session.way_out and
   ui.draw.tables. Why: two messages of inputs with no defined output can stand in one place in
   one run, and only the first may carry the buttons that fix them; a table's containers take
   the first key free in the run, the same from one run to the next; no public call asks
   whether a key was already drawn in this run (st.session_state keeps keys across runs).
   Upstream: none found. Tested: tests/app/test_dead_ends.py (a constant vector at eps = 0),
   tests/app/test_phone_tables.py.

Types the documentation names as the return of public calls (DeltaGenerator from
streamlit.delta_generator, StreamlitPage from streamlit.navigation.page) are imported where
they are used; they are not reaches.
"""

from streamlit import dataframe_util
from streamlit.errors import StreamlitDuplicateElementKey
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState
from streamlit.runtime.state.common import WidgetMetadata, is_element_id
from streamlit.runtime.state.session_state import Serialized, WStates

__all__ = [
    "AppSession",
    "ClientState",
    "PagesManager",
    "Runtime",
    "Serialized",
    "StreamlitDuplicateElementKey",
    "ThreadState",
    "WStates",
    "WidgetMetadata",
    "WidgetState",
    "dataframe_util",
    "get_script_run_ctx",
    "is_element_id",
]
