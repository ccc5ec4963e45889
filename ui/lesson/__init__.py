"""The guided path through the pages: what to try next on each page (guide), the exercises
(exercises), "predict before reveal" (predict), the glossary expander (glossary) and the
stepper's twenty steps (steps).

May import ln_core, teaching and the rest of ui except ui.draw; never pages/.
"""
