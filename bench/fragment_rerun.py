"""Rerun only a page's fragment in AppTest, as a browser does when a widget inside it changes.

AppTest (Streamlit 1.67) always reruns the whole script, so a click on the Stepper's Next would
be measured as a full rerun. A browser instead sends the rerun with the fragment's id, and the
server then runs that fragment alone (no app.py, no sidebar). This module makes AppTest's run
send that id, so bench/page_cpu.py measures what a click really costs the server.
"""

from __future__ import annotations

import functools
from unittest import mock

from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.testing.v1 import AppTest

# The name AppTest's script runner builds each run's RerunData from; patching it there adds
# the fragment id without copying AppTest's run.
_RERUN_DATA = "streamlit.testing.v1.local_script_runner.RerunData"
# AppTest builds a fresh PagesManager for every run, which knows the app's pages only once
# app.py's st.navigation has run; a session's manager keeps them from its last full run, so a
# fragment's st.page_link finds its page there.
_PAGES_MANAGER = "streamlit.testing.v1.app_test.PagesManager"


def page_fragment(at: AppTest, nested: bool = False) -> str:
    """The id of the page's fragment, or with `nested` of the one inside it where it has one.

    A lab page has one fragment, or one with one more inside it; a full run registers the
    outer one first, then the inner as the outer runs, and forgets fragments it did not
    register, so after a page's full run the storage holds that page's fragments only, in that
    order. A nested click on a page without the inner fragment (an older checkout, --root)
    reruns the one fragment, as a browser would there. Raises if there are none or more.
    """
    # AppTest keeps the fragments across its runs in this (private) storage; no public way
    # to read a fragment's id exists in AppTest.
    ids = list(at._fragment_storage._fragments)
    if len(ids) not in (1, 2):
        raise RuntimeError(f"expected one fragment, or one inside another; found {ids}")
    return ids[-1] if nested else ids[0]


def fragment_rerun(at: AppTest, fragment_id: str) -> AppTest:
    """Run AppTest with the widget changes made since the last run, running only the fragment.

    Afterwards at's elements are the fragment's only (as a browser's delta would be).
    """
    pages = at._registered_pages  # AppTest's copy of the last full run's pages (private)
    with (
        mock.patch(_RERUN_DATA, functools.partial(RerunData, fragment_id=fragment_id)),
        mock.patch(_PAGES_MANAGER, functools.partial(_knowing, pages)),
    ):
        return at.run()


def _knowing(pages: dict, *args: object, **kwargs: object) -> PagesManager:
    """A PagesManager as AppTest builds it, holding the pages a session's would still hold."""
    manager = PagesManager(*args, **kwargs)
    manager._set_pages(pages)
    return manager
