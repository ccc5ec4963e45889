"""What one browser's messages may change: its own session, never the server or others.

Two kinds of message a browser can build by hand reach further than its session in Streamlit,
and neither has a setting that turns it off, so this module wraps the methods that take them.

`clear_cache` (the developer menu's "Clear cache", which the lab does not show) empties the
server's shared caches for every session at once. The lab's caches are keyed by the numbers
they hold (ui.compute), so clearing them never makes a result more right, only every visitor
slower: the message is ignored.

Widget messages a browser could not have sent are forgotten, never raised.
Streamlit reads a widget's value from the browser's message with that widget's own
deserializer, before any of the lab's code runs (to call on_change callbacks). A hand-built
message with a value of another kind than the widget sends (a string for a slider or a
toggle, an integer for a select box, a list, text that is not JSON for a data editor) makes
that read raise, on this run and on every later one, or leaves the widget unable to send its
own value back: the session shows "This app has encountered an error" until it is reloaded.

Streamlit has no hook at that point, so this module wraps the two methods that store and read
such a value (WStates.set_widget_from_proto, WStates.__getitem__): a state for an id no widget
has is not stored; a value of the wrong kind, or one its widget cannot read, reads
as no value, as if the message had never come, and the widget shows the value the state holds.
A value of the right kind that the widget does not offer ("Nope" for a select box) does reach
the app, where ui.state.bound() checks it against the state's schema.
"""

from __future__ import annotations

from typing import Any

from ui.streamlit_private import (
    AppSession,
    Serialized,
    WidgetMetadata,
    WidgetState,
    WStates,
    is_element_id,
)

_read = WStates.__getitem__
MAX_DEPTH = 8  # how deep a widget's value may nest (see _shallow)
_store = WStates.set_widget_from_proto


def _unreadable(wstate: object, metadata: WidgetMetadata | None) -> bool:
    """True if a widget's value, as the browser sent it, is not of the kind the widget sends."""
    if not isinstance(wstate, Serialized) or metadata is None:
        return False
    sent = wstate.value.WhichOneof("value")
    return sent is not None and sent != metadata.value_type  # None: "no value", a kind of its own


def read_or_forget(self: WStates, key: str) -> Any:
    """WStates.__getitem__, but a sent value its widget cannot read is no value (KeyError,
    as for a widget the browser never sent); the widget's next registration replaces it."""
    state = self.states.get(key)
    # Every widget's draw reads the whole session through here, each key that is not a widget's
    # too: a missing key or a value the server stored itself (not Serialized) is checked no
    # further.
    if state is None or (
        isinstance(state, Serialized) and _unreadable(state, self.widget_metadata.get(key))
    ):
        raise KeyError(key)
    try:
        value = _read(self, key)
    except (TypeError, ValueError, IndexError, AttributeError, RecursionError):
        # The right kind, but not a value of this widget (an index past a radio's options,
        # text that is not JSON for a data editor, JSON nested deeper than Python recurses).
        raise KeyError(key) from None
    if isinstance(state, Serialized) and not _shallow(value):
        raise KeyError(key)  # no widget sends it; Streamlit's own copy of it would recurse
    return value


def _shallow(value: Any) -> bool:
    """Whether a value nests lists and mappings at most MAX_DEPTH deep (a data editor's edits
    are 3: rows, cells, a cell's value), looked at without recursion."""
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH + 1):
        level = [
            inner
            for outer in level
            if isinstance(outer, (dict, list, tuple))
            for inner in (outer.values() if isinstance(outer, dict) else outer)
        ]
        if not level:
            return True
    return False


def store_if_widget(self: WStates, widget_state: WidgetState) -> None:
    """WStates.set_widget_from_proto, ignoring a state whose id no widget can have (an empty
    id would be taken for a session key that does not exist, and fail every run)."""
    if is_element_id(widget_state.id):
        _store(self, widget_state)


def ignore_clear_cache(self: AppSession) -> None:
    """AppSession._handle_clear_cache_request: the shared caches stay (see the top)."""


WStates.__getitem__ = read_or_forget
WStates.set_widget_from_proto = store_if_widget
AppSession._handle_clear_cache_request = ignore_clear_cache
