"""Start LayerNorm Lab: `streamlit run deploy/asgi.py` plus any options given (what ./run.sh
runs): app.py, and the route where a following student's Stepper asks for the class's step.

One thing more than `streamlit run app.py` alone: because a folder named pages/ sits beside
app.py, Streamlit treats a fresh server as a legacy pages-folder app until app.py has reached
st.navigation once, and every link to a page opened before then (a class following one link in
the same second) gets a "Page not found" dialog, with the right page rendered behind it.
Declaring the app navigation-based before the server starts removes that dialog. The switch is
Streamlit's class attribute `PagesManager.uses_pages_directory`, not a public API (reach 1 of
ui.streamlit_private, where tests/server/test_streamlit_private.py checks it). The server
itself is `python -m streamlit run deploy/asgi.py`, run in this process so the switch holds.

And the libraries app.py imports first are imported here, before the server answers its health
check: a class opening the link together on a fresh server (or on replicas, whose HAProxy starts
once every process answers) then waits for no import (about 1.5 s of CPU), only for its pages.
"""

import runpy
import sys
from pathlib import Path

# In app.py's order: what a browser's messages may change, the allocator, the heavy libraries.
import ui.server.browser_messages
import ui.server.server_memory
import ui.server.warmup  # noqa: F401
from ui.streamlit_private import PagesManager

PAGES_SWITCH = "uses_pages_directory"
SERVER = Path(__file__).resolve().parents[2] / "deploy" / "asgi.py"  # app.py, and one route


def main() -> None:
    setattr(PagesManager, PAGES_SWITCH, False)
    sys.argv = ["streamlit", "run", str(SERVER), *sys.argv[1:]]
    runpy.run_module("streamlit", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
