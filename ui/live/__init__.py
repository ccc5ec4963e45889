"""A live class: the instructor asks, the room answers from their own screens, students follow.

The store (store, over schema; SQLite or PostgreSQL through SQLAlchemy Core) and its pure rules
(rules: join codes, secrets, limits); where the store is and the browser's cookies (connect);
this browser's place in a class (membership); following the instructor (follow); the
student's class bar (student); what the Class page (pages/teach/teacher.py) can ask (asking)
and the reveal's chart and results file (tally); a typed formula asked of the class, judged by
the derive page's judge, and the room's histogram of its mistakes (formulas).

May import ln_core, teaching, ui.entry (errors, inputs), ui.export.download, ui.server.compute,
ui.session (the state and
the link a follower takes); never ui.draw nor pages/. Only app.py and
pages/teach/ import it.
"""
