"""Teaching material the app shows: presets that each demonstrate one behaviour, the upstream
gradients a student can pick, and predict-before-reveal questions.

Kept out of ln_core, which holds only the mathematics; everything here builds on ln_core.
"""
