"""Autograde preprocessor: every string of the notebook as text a UTF-8 file can hold.

A JSON notebook may spell a lone surrogate (`"\\ud800"`) that no UTF-8 file can store: in a cell
the student handed in, or in an output or message the sandbox sent back (an exception's text).
nbgrader hashes sources and writes `autograded/` as UTF-8, and one such character made it drop
that student's whole autograded notebook (`UnicodeEncodeError`, autograde's exit status 1). Run
first (what the student handed in) and last (what the pinned run added), each such string is
shown with `\\udXXX` escapes instead.
"""

from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.engine.terminal_text import utf8_text


def storable(node):
    """`node` (a notebook's dicts, lists and strings) with every string made valid UTF-8, in place
    where it is a container; walked without recursion (a student's metadata may nest deeply)."""
    if isinstance(node, str):
        return utf8_text(node)
    stack = [node]
    while stack:
        current = stack.pop()
        pairs = current.items() if isinstance(current, dict) else enumerate(current)
        for key, value in list(pairs):
            if isinstance(value, str):
                fixed = utf8_text(value)
                if fixed is not value:
                    current[key] = fixed
            elif isinstance(value, (dict, list)):
                stack.append(value)
            if isinstance(current, dict) and isinstance(key, str) and utf8_text(key) is not key:
                current[utf8_text(key)] = current.pop(key)
    return node


class ValidUtf8Text(NbGraderPreprocessor):
    """First of `c.Autograde.sanitize_preprocessors` and last of `autograde_preprocessors`."""

    def preprocess(self, nb, resources):
        storable(nb)
        return nb, resources
