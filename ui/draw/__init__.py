"""Drawing: Plotly figures (figures, downsample), tables (tables), heatmaps such as the
Jacobian's (matrix_view), the audit (audit_view), verdict metrics and the glossary's names in
plain words (glossary). What one page alone draws
lives beside that page (pages/<name>/: the Stepper's parts, a checked derivation).

Drawing takes plain values, the arrays and results a page hands it: it never reads the session
(ui.session) nor computes (ui.server), which the "plain-drawing" contract in pyproject.toml
forbids. It may import ln_core (for its types) and teaching, and today imports nothing else in ui.
"""
