"""Teaching material the app shows: presets that each demonstrate one behaviour (presets), the
upstream gradients a student can pick (upstream), the frozen Inputs every computation starts
from: a preset's arrays with the chosen upstream, eps, dtype and layer options (inputs), the
stepper's twenty steps (steps), the predict-before-reveal questions (quiz), the words of every
verdict (verdicts, jacobian_verdicts) and the glossary of node names (glossary).

Plain Python and NumPy, no Streamlit. Kept out of ln_core, which holds only the mathematics;
everything here builds on ln_core and never imports ui or pages.
"""
