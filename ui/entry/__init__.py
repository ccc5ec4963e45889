"""Reading typed text: a number exactly as written or refused (numbers), the sizes the sidebar,
CSV and links accept (limits), CSV files (csv_io), user text quoted exactly as typed
(literal). The messages that refuse typed text are drawn by ui/session/errors.py; what is read
ends up in the frozen Inputs a page computes from (teaching/inputs.py).

No widgets and no session state here (the widgets bound to the session are in ui/session).
It may import ln_core and teaching; nothing else in ui (lesson, session and server import it).
"""
