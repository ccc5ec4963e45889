"""The guided path through the pages: what to try next on each page (guide), the exercises
(exercises) and "predict before reveal" (predict). The glossary is drawn by ui/draw/glossary.py;
the stepper's twenty steps are plain data in teaching/steps.py.

The top of ui: may import any other ui folder, ln_core and teaching; never pages/.
"""
