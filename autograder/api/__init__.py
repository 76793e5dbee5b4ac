"""The kit as a library: what the CLI verbs do, as functions with keyword arguments.

Modules: author_check (an author's whole-course check: build, grade the reference and the
skeleton, release the solutions, pack the Gradescope bundle).
"""
