"""Reading typed text: a number exactly as written or refused (numbers), the sizes the sidebar,
CSV and links accept (limits), CSV files (csv_io), user text quoted exactly as typed
(literal), and the frozen Inputs a page computes from (inputs). The messages that refuse
typed text are drawn by ui/session/errors.py.

No widgets and no session state here (the widgets bound to the session are in ui/session).
It may import ln_core and teaching; nothing else in ui (lesson, session and server import it).
"""
