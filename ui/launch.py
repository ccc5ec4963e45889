"""Start LayerNorm Lab: `streamlit run app.py`, minus one first-request surprise.

Because a folder named pages/ exists, Streamlit treats a fresh server as a legacy pages-folder
app until app.py's st.navigation has run once. Whoever opens a page link first on a new server
would see a "Page not found" notice (the right page still renders behind it). Declaring the
app navigation-based before the server starts removes that notice.
"""

import sys

from streamlit.web import cli

try:
    from streamlit.runtime.pages_manager import PagesManager
except ImportError:  # a Streamlit without this switch: start it unchanged
    PagesManager = None


def main() -> None:
    if PagesManager is not None and hasattr(PagesManager, "uses_pages_directory"):
        PagesManager.uses_pages_directory = False
    sys.argv = ["streamlit", "run", "app.py", *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
