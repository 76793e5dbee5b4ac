"""The grader's seal on a result it writes: an HMAC of the student's record with the assignment's
secret seed (engine/variants.py), so a record found where students' files lie too (a folder of
submission folders, Gradescope's export, holds each student's upload beside the grader's
results.json) can be told from one a student wrote. Only an assignment with per-student variants
has a seed; it is also the only one whose records the copy report compares.
"""

from __future__ import annotations

import hashlib
import hmac
import json

SEAL_KEY = "seal"   # beside extra_data.submission


def _canonical(record) -> bytes:
    # as the record reads back from its file: every string escaped the same way, keys sorted
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _mac(assignment: str, record) -> str | None:
    from autograder.engine.registry import ConfigError
    from autograder.engine.variants import has_variants, read_seed

    try:
        if not assignment or not has_variants(assignment):
            return None
        seed = read_seed(assignment)
    except ConfigError:
        return None
    return hmac.new(seed, b"record:" + assignment.encode() + b"\0" + _canonical(record), hashlib.sha256).hexdigest()


def seal_of(assignment: str, record) -> str | None:
    """The seal of `record` (JSON data, as it will read back), None where the assignment has no seed."""
    return _mac(assignment, record)


def sealed(assignment: str, data) -> bool:
    """Whether the results JSON `data` holds a record of `assignment` with the grader's seal on it."""
    extra = data.get("extra_data") if isinstance(data, dict) else None
    record = extra.get("submission") if isinstance(extra, dict) else None
    given = extra.get(SEAL_KEY) if isinstance(extra, dict) else None
    if not isinstance(record, dict) or not isinstance(given, str):
        return False
    expected = _mac(assignment, record)
    return expected is not None and hmac.compare_digest(expected, given)
