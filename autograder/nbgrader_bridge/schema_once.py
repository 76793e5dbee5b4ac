"""nbgrader's cell-metadata validation with its schema checked once, not once per cell.

nbgrader 0.9.6 validates every cell's nbgrader metadata with `jsonschema.validate(metadata,
schema)`, which first checks the schema itself (its own fixed v3.json) on every call: ~3 ms a
cell, twice per notebook (sanitising and autograde's CheckCellMetadata), our own
DropInvalidCellMetadata once more — over half of what `nbgrader autograde` spends per student
once it runs no kernel. `install()` gives nbgrader's validator module (nbgraderformat/common.py)
a stand-in for jsonschema whose `validate` checks each schema once and then validates and reports
every instance exactly as jsonschema.validate does (the best-matching error is raised). Loaded
only in nbgrader's own process (by sanitize_metadata.py).
"""

from __future__ import annotations

import json

import jsonschema
from nbgrader.nbgraderformat import common


class SchemaCheckedOnce:
    """The jsonschema module, but `validate(instance, schema)` keeps one checked validator per schema."""

    def __init__(self):
        self._validators: dict[str, object] = {}

    def __getattr__(self, name):
        return getattr(jsonschema, name)

    def validate(self, instance, schema, *args, **kwargs):
        if args or kwargs:
            return jsonschema.validate(instance, schema, *args, **kwargs)
        key = json.dumps(schema, sort_keys=True)
        validator = self._validators.get(key)
        if validator is None:
            kind = jsonschema.validators.validator_for(schema)
            kind.check_schema(schema)   # raises SchemaError as jsonschema.validate does
            validator = self._validators[key] = kind(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error
        return None


def install() -> None:
    if not isinstance(common.jsonschema, SchemaCheckedOnce):
        common.jsonschema = SchemaCheckedOnce()
