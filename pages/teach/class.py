"""Class: the instructor's page for a live class (reached by its URL, /class; not in the menu)."""

from pages.teach import teacher

teacher.page()
