"""How the nbgrader path isolates student code: bubblewrap, or rlimits only when the instructor
lowers it explicitly with CS349E_ISOLATION=rlimits (the shared contract of autograder.sandbox;
nothing falls back on its own).

Used by `pregrade` (the trusted grader's sandbox) and by autograde's kernels (kernel_sandbox.py).
"""

from __future__ import annotations

from autograder.sandbox import isolation_from_env, resolve_isolation


def kernel_isolation() -> str:
    """"bubblewrap" or "rlimits" as CS349E_ISOLATION asks; SandboxUnavailable (one line: why,
    and how to install bubblewrap or lower isolation) when it cannot be had here."""
    return resolve_isolation(isolation_from_env())
