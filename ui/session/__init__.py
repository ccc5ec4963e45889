"""The session and the widgets bound to it: every key and its binding (state), number fields
(fields), the table editors (editors), the vector picker (picker), the sidebar (sidebar), the
gamma/beta switch (affine_control), presenter mode (presenter), the link that shares a session
(share), keeping a tab's view across a reconnect (reconnect), a click that acts once however
often Streamlit delivers it (clicks), and a refusal shown with the buttons that fix the inputs
(errors, way_out).

Every session key is defined here (state.SCHEMA) and bound to its widgets here. May import
ln_core, teaching, ui.entry, ui.server and ui.draw; never ui.lesson nor pages/.
"""
