"""The Streamlit side of LayerNorm Lab that the pages share, in folders named for what they hold.

- ui/entry/    reading typed text: numbers, the limits of each entrance, CSV, refusal messages
- ui/session/  the session: its state, the widgets bound to it (fields, table editors, the
               sidebar, the vector picker), the link, reconnecting, presenter mode
- ui/draw/     drawing from plain values: figures, the graph, tables, heatmaps, the stepper's
               and the audit's views
- ui/server/   the server: launch, warm-up, memory, page caps, the cached wrappers of ln_core
- ui/lesson/   the guided path: the guide, exercises, predictions, the glossary expander
- ui/export/   the files a student downloads: the bundle and the report
- ui/live/     a live class: its store, joining, following the instructor, votes, the Class page
- ui/streamlit_private/  every reach into Streamlit's private modules, each listed with why

ui may import teaching and ln_core, never pages/ or app.py. Inside ui nothing imports in a
circle: today lesson -> session -> server -> export -> draw, and entry is imported by lesson,
session and server; live (over session, server and entry) draws nothing of ui.draw and only
app.py and pages/ import it; streamlit_private imports nothing of the lab. The contracts in
pyproject.toml ([tool.importlinter]) hold this.
"""
