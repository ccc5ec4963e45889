"""The files a student downloads: the bundle of arrays and its JSON, NPZ and NumPy snippet
(bundle), and the lesson and exercise notebooks (notebook, from the cell texts of notebook_code
and the notebook source in cells/, with numbers written by python_literal; notebook_download
draws their buttons).

May import ln_core, teaching (its Inputs are what a notebook is written from), ui.draw.tables
and ui.entry.literal (user text quoted for Markdown); never ui.session, ui.server nor
pages/ (the pages build a notebook's View from the session). The HTML report, which only the
Export page offers, is beside it (pages/export/report.py).
"""
