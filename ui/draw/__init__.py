"""Drawing: Plotly figures (figures, downsample), tables (tables), heatmaps such as the
Jacobian's (matrix_view), the audit (audit_view), a student's checked derivation
(derivation_view) and verdict metrics. The Stepper's own parts live beside it in pages/stepper/.

Drawing takes plain values, the arrays and results a page hands it: it never reads the session
(ui.session) nor computes (ui.server), which the "plain-drawing" contract in pyproject.toml
forbids. It may import ln_core (for its types) and teaching, and today imports nothing else in ui.
"""
