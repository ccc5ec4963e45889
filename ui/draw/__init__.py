"""Drawing: Plotly figures (figures, downsample), the ten-node graph (graph), tables (tables),
heatmaps such as the Jacobian's (matrix_view), the stepper's parts (step_view), the audit
(audit_view), the LaTeX of each node (formulas), the result panel and verdict metrics.

Drawing takes plain values and never imports session state (ui.session): what a page shows is
decided by the page. May import ln_core, teaching, ui.entry.inputs, ui.server (cached results)
and ui.lesson.steps; never pages/.
"""
