"""The files a student downloads: the bundle of arrays and its JSON, NPZ and NumPy snippet
(bundle) and the HTML report (report).

May import ln_core, teaching and ui.draw.tables; never ui.session nor pages/.
"""
