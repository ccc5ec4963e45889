"""The Streamlit side of LayerNorm Lab that the pages share, in folders named for what they hold.

- ui/entry/    reading what a student types: numbers, fields, table editors, CSV, limits, errors
- ui/session/  the session: its state, the link, reconnecting, the sidebar, presenter mode
- ui/draw/     drawing: figures, the graph, tables, heatmaps, the stepper's and audit's views
- ui/server/   the server: launch, warm-up, memory, caps, the cached wrappers around ln_core
- ui/lesson/   the guided path: the guide, exercises, predictions, glossary, the twenty steps
- ui/export/   the files a student downloads: the bundle and the report

ui may import teaching and ln_core, never pages/ or app.py.
"""
