"""Autograde preprocessor: a student's broken nbgrader cell metadata costs that cell, not the batch.

nbgrader 0.9.6 aborts `nbgrader autograde` for every remaining student when one notebook holds
cell metadata of another schema version, and its own DeduplicateIds produces exactly that: the
copy of a duplicated grade or locked cell gets `nbgrader = {}` (schema 0), which CheckCellMetadata
then rejects with SchemaTooOldError. Run first, this preprocessor removes the nbgrader metadata of
every cell that is invalid or repeats a grade_id seen earlier in the notebook; those cells become
ordinary cells, and nbgrader restores or zeroes the grade cells as usual.
"""

from __future__ import annotations

from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.engine.terminal_text import show_controls
from autograder.nbgrader_bridge.schema_once import install

install()   # every metadata check of this autograde run checks nbgrader's schema once (schema_once.py)


class DropInvalidCellMetadata(NbGraderPreprocessor):
    """First of `c.Autograde.sanitize_preprocessors`."""

    def preprocess(self, nb, resources):
        validator = MetadataValidator()
        seen: set[str] = set()
        for index, cell in enumerate(nb.cells):
            if "nbgrader" not in cell.metadata:
                continue
            problem = _problem(validator, cell)
            grade_id = cell.metadata["nbgrader"].get("grade_id") if problem is None else None
            if problem is None and grade_id in seen:
                problem = f"repeats grade_id {grade_id!r}"
            if problem is None:
                seen.add(grade_id)
                continue
            # nbgrader's validator quotes the cell's source in some messages: the student's text
            self.log.warning("Cell %d: nbgrader metadata removed (%s)", index, show_controls(problem))
            del cell.metadata["nbgrader"]
        return nb, resources


def _problem(validator: MetadataValidator, cell) -> str | None:
    if not isinstance(cell.metadata["nbgrader"], dict):
        return "not a mapping"
    try:
        validator.validate_cell(cell)
    except Exception as err:  # jsonschema ValidationError, SchemaTooOld/NewError, missing keys
        return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    return None
