"""The guided path through the pages: what to try next on each page (guide), the exercises
(exercises), "predict before reveal" (predict) and the glossary expander (glossary). The
stepper's twenty steps are plain data in teaching/steps.py.

The top of ui: may import any other ui folder, ln_core and teaching; never pages/.
"""
