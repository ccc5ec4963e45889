"""The session: every key it holds and its widgets' bindings (state), the link that shares it
(share), keeping the view across a reconnect (reconnect), the sidebar (sidebar), presenter mode
(presenter), the gamma/beta switch (affine_control) and the stepper's navigation row (step_nav).

The only place that reads or writes st.session_state for the pages. May import ln_core,
teaching, ui.entry (to read what is typed), ui.server (cached results), ui.lesson.steps; never
ui.draw (drawing takes plain values) nor pages/.
"""
