"""nbgrader's cell-metadata validation with its schema checked once, not once per cell.

nbgrader 0.9.6 validates every cell's nbgrader metadata with `jsonschema.validate(metadata,
schema)`, which first checks the schema itself (its own fixed v3.json) on every call: ~3 ms a
cell, twice per notebook (sanitising and autograde's CheckCellMetadata), our own
DropInvalidCellMetadata once more — over half of what `nbgrader autograde` spends per student
once it runs no kernel. `install()` gives nbgrader's validator module (nbgraderformat/common.py)
a stand-in for jsonschema whose `validate` checks each schema once and then validates and reports
every instance exactly as jsonschema.validate does (the best-matching error is raised). A valid
instance is remembered by its content (with each value's type: 1, 1.0 and True differ): every
student's notebook repeats the release's ~155 metadata mappings, three checks each, so only the
first of those is validated. Loaded only in nbgrader's own process (by sanitize_metadata.py).
"""

from __future__ import annotations

import json

import jsonschema
from nbformat import NotebookNode
from nbgrader.nbgraderformat import common

VALID_KEPT = 4096   # valid instances remembered per schema (a notebook has a few hundred)


class _NotJson(Exception):
    """A value that is not plain JSON data: validated every time."""


def _content(value):
    """A hashable key equal for two values exactly when they are the same JSON data of the same types."""
    kind = type(value)
    if value is None or kind in (str, int, float, bool):
        return kind.__name__, value
    if kind is list:
        return "list", tuple(_content(v) for v in value)
    if kind in (dict, NotebookNode) and all(type(k) is str for k in value):
        return "dict", tuple(sorted((k, _content(v)) for k, v in value.items()))
    raise _NotJson


class SchemaCheckedOnce:
    """The jsonschema module, but `validate(instance, schema)` keeps one checked validator per
    schema and the instances it found valid."""

    def __init__(self):
        self._validators: dict[str, object] = {}
        self._valid: dict[str, set] = {}
        self._last = (None, "")   # nbgrader passes the same schema object for every cell

    def __getattr__(self, name):
        return getattr(jsonschema, name)

    def validate(self, instance, schema, *args, **kwargs):
        if args or kwargs:
            return jsonschema.validate(instance, schema, *args, **kwargs)
        if self._last[0] is not schema:
            self._last = (schema, json.dumps(schema, sort_keys=True))
        key = self._last[1]
        validator = self._validators.get(key)
        if validator is None:
            kind = jsonschema.validators.validator_for(schema)
            kind.check_schema(schema)   # raises SchemaError as jsonschema.validate does
            validator = self._validators[key] = kind(schema)
            self._valid[key] = set()
        try:
            content = _content(instance)
        except _NotJson:
            content = None
        valid = self._valid[key]
        if content is not None and content in valid:
            return None
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error
        if content is not None and len(valid) < VALID_KEPT:
            valid.add(content)
        return None


def install() -> None:
    if not isinstance(common.jsonschema, SchemaCheckedOnce):
        common.jsonschema = SchemaCheckedOnce()
