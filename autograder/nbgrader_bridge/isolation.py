"""How the nbgrader path isolates student code: bubblewrap, or rlimits only when the instructor
lowers it explicitly with CS349E_ISOLATION=rlimits (the shared contract; no silent fallback).

Used by `pregrade` (the trusted grader's sandbox) and by autograde's kernels (kernel_sandbox.py).
"""

from __future__ import annotations

import os

from autograder.sandbox import SandboxUnavailable, resolve_isolation

ISOLATION_ENV = "CS349E_ISOLATION"
HINT = (f"install bubblewrap (apt-get install bubblewrap), or lower isolation explicitly with "
        f"{ISOLATION_ENV}=rlimits (student code then runs unsandboxed)")


def requested_isolation() -> str:
    """"rlimits" when the instructor lowered it explicitly, else "bubblewrap" (no silent fallback)."""
    value = os.environ.get(ISOLATION_ENV, "").strip()
    if value in ("", "bubblewrap"):
        return "bubblewrap"
    if value == "rlimits":
        return "rlimits"
    raise SandboxUnavailable(f"{ISOLATION_ENV}={value!r}: expected 'bubblewrap' or 'rlimits'")


def kernel_isolation() -> str:
    """How student code on the nbgrader path is isolated here; SandboxUnavailable (with the fix) when they cannot be."""
    requested = requested_isolation()
    try:
        return resolve_isolation(requested)
    except SandboxUnavailable as err:
        raise SandboxUnavailable(f"no sandbox for student code (pregrade, autograde kernels): {err}; {HINT}") from None
