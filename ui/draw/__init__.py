"""Drawing: Plotly figures (figures, downsample), the ten-node graph (graph), tables (tables),
heatmaps such as the Jacobian's (matrix_view), the stepper's parts (step_view), the audit
(audit_view), a student's checked derivation (derivation_view), the LaTeX of each node
(formulas), the result panel and verdict metrics.

Drawing takes plain values, the arrays and results a page hands it: it never reads the session
(ui.session) nor computes (ui.server), which the "plain-drawing" contract in pyproject.toml
forbids. It may import ln_core (for its types) and teaching, and today imports nothing else in ui.
"""
