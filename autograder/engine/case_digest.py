"""The digest of an assignment's case set: every case (call, expectation, weight) and every
property's fixed examples, hashed in one canonical encoding.

Recorded in every SubmissionResult and shown in the feedback footer: two results with the same
digest were graded against exactly the same hidden cases, whatever command or machine graded them.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any, Mapping

import numpy as np

from autograder.engine.cases import Group, Suite

PREFIX = "sha256:"


def case_set_digest(suites: Mapping[str, Suite]) -> str:
    h = hashlib.sha256(b"cs349e case set v1")
    for function in sorted(suites):
        suite = suites[function]
        _feed(h, ("suite", function, len(suite.cases), len(suite.properties)))
        for case in suite.cases:
            _feed(h, case)
        for prop in suite.properties:
            if prop.examples is None:
                raise ValueError(f"{function}: property {prop.label!r} has no fixed examples")
            _feed(h, ("property", prop.label, prop.function, prop.group, prop.weight, prop.max_examples,
                      prop.examples))
    return PREFIX + h.hexdigest()


def _feed(h, value: Any) -> None:
    """Type-tagged, length-framed: different values never feed the same bytes."""
    def put(tag: str, payload: bytes = b"") -> None:
        h.update(f"{tag}:{len(payload)}:".encode() + payload)

    if isinstance(value, np.generic):  # before float: np.float64 is a float
        _feed(h, np.asarray(value))
    elif value is None or isinstance(value, (bool, int, float, str)):
        put(type(value).__name__, repr(value).encode())  # repr(float) round-trips, -0.0 included
    elif isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"cannot digest an array of dtype {value.dtype}")
        put(f"nd{value.dtype.str}{value.shape}", np.ascontiguousarray(value).tobytes())
    elif isinstance(value, Group):  # a kind of test: its label and default weight both count
        put("group")
        _feed(h, (value.label, value.weight))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        put("dc", type(value).__qualname__.encode())
        for f in dataclasses.fields(value):
            put("field", f.name.encode())
            _feed(h, getattr(value, f.name))
    elif isinstance(value, Mapping):
        put("map", str(len(value)).encode())
        for k, v in value.items():
            _feed(h, k)
            _feed(h, v)
    elif isinstance(value, (list, tuple)):
        put(type(value).__name__, str(len(value)).encode())
        for v in value:
            _feed(h, v)
    else:
        raise TypeError(f"cannot digest a {type(value).__name__} in a case")
