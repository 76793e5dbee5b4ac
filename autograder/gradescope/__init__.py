"""Gradescope support: the autograder zip (bundle.py) and what runs inside Gradescope's
container for each submission (runtime.py, entry `python -m autograder.gradescope`)."""
