"""After a server restart the URL wins: a tab that reconnects keeps the view its link holds.

A restarted server has no sessions, so a tab that reconnects gets a new, empty one. If the
student's first action is then a page switch, Streamlit's browser code asks for the new page
without the URL's query string (it keeps only parameters bound to widgets): the new session
would start from the defaults and write them over the link the tab still shows. Nothing in
that request tells the server what the link was.

The tab knows, so a small script in every run leaves the run's page and link in the tab's
sessionStorage (per tab, kept across reloads), marked with an id of the loaded document. When
a session's first run finds a mark left by the same document, the document outlived a session:
the server restarted (or dropped a session it had given up on). If that run shows another page
than the last one remembered, the student's first action was a page switch, and the tab is
reloaded on the new page with the remembered link: the view comes back the way a shared link
brings it. A fresh visit is a new document, so it never restores anything.

A tab that switched pages before the restart sends no rerun when it reconnects either, so the
new session never runs the page and never registers its fragments: a control inside one (the
Stepper's Next, the Jacobian's toggle) sends a fragment rerun the session does not know, and
Streamlit drops it without a word ("The fragment with id ... does not exist anymore"). So the
tab watches its own connection: when it comes back after being lost, it clicks a hidden button
outside every fragment, and that full run (with the URL's link) registers every fragment
before the student's first click. After a blip to the same session the run changes nothing.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import streamlit as st
from streamlit.navigation.page import StreamlitPage

STORAGE_KEY = "lnlab-view"
_SEEN = "reconnect_seen"
REJOIN_KEY = "reconnect_rerun"  # the hidden button whose click is the full run

# Run with FIRST, PAGE, LINK and KEY defined (see keep_view). The mark is {doc, page, link}.
_SCRIPT = """
window.lnlabDocument = window.lnlabDocument || String(Math.random()).slice(2);
const saved = JSON.parse(sessionStorage.getItem(KEY) || "null");
if (FIRST && saved && saved.doc === window.lnlabDocument && saved.page !== PAGE) {
  let base = window.location.pathname;
  for (const name of [PAGE, saved.page]) {
    if (name && base.endsWith("/" + name)) base = base.slice(0, -name.length);
  }
  if (!base.endsWith("/")) base += "/";
  window.location.replace(base + PAGE + "?" + saved.link);
} else {
  sessionStorage.setItem(
    KEY, JSON.stringify({doc: window.lnlabDocument, page: PAGE, link: LINK})
  );
}
if (!window.lnlabRejoin) {
  window.lnlabRejoin = true;
  let lost = false;
  new MutationObserver(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const connection = app && app.getAttribute("data-test-connection-state");
    if (connection && connection !== "CONNECTED") {
      lost = true;
    } else if (connection === "CONNECTED" && lost) {
      lost = false;
      const rejoin = document.querySelector(".st-key-" + REJOIN + " button");
      if (rejoin) rejoin.click();
    }
  }).observe(document, {
    attributes: true, subtree: true, attributeFilter: ["data-test-connection-state"],
  });
}
"""


def _js(value: object) -> str:
    """A JavaScript literal for `value` that cannot end the script element it sits in."""
    return json.dumps(value).replace("<", "\\u003c")


def keep_view(page: StreamlitPage, view: dict[str, str]) -> None:
    """Remember this run's page and link (`view`: share.encode's query parameters) in the tab,
    or bring the link back after a restart."""
    first = not st.session_state.get(_SEEN)
    st.session_state[_SEEN] = True
    values = {
        "FIRST": first,
        "PAGE": page.url_path,
        "LINK": urlencode(view),
        "KEY": STORAGE_KEY,
        "REJOIN": REJOIN_KEY,
    }
    constants = "".join(f"const {name} = {_js(value)};" for name, value in values.items())
    # A function of its own, so the constants are declared anew each time a run's script runs.
    code = f"(() => {{{constants}{_SCRIPT}}})();"
    # In the sidebar: in the main area even an empty element adds a gap to the page.
    hidden = f"<style>.st-key-{REJOIN_KEY} {{ display: none; }}</style>"
    st.sidebar.html(f"{hidden}<script>{code}</script>", unsafe_allow_javascript=True)
    # Clicked only by the script above, after a lost connection comes back.
    st.sidebar.button("Rejoin the server", key=REJOIN_KEY)
