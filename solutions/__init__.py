"""Reference solutions of the CS349E exercises: one subpackage per assignment.

Instructor-only: never shipped to students, never importable inside the grading sandbox.
"""
