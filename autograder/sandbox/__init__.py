"""Runs untrusted student code in an isolated worker process and returns plain data.

    with Sandbox(submission_dir, overlay={"shapes.py": ROOT / "shapes.py"},
                 factories=["shapes:Box.from_dict"]) as box:
        outcome = box.call("student", "volume", (Rebuilt("shapes:Box.from_dict", {"w": 2}),))

Modules: confinement (one value per grader process: the isolation backend, the quota backend
and the placement policy, each a class; every decision by isolation or quotas asks it),
limits (Limits), outcomes (CallOutcome, NotebookOutcome, TimeoutCause, the one overload error), codec (the safe wire
format), messages (a request's names and a reply's outcome as checked data), launcher (picks the
plan: bwrap.py the bubblewrap command line and its probe, uid_fallback.py the explicit fallback and
its probes, worker_plan.py what every worker gets), lockdown (the
confinement every worker applies to itself), uids (a host uid per sandbox), placement (CPUs of
its own per open sandbox), reaper (ends a uid's
processes), leftovers (removes the files a uid left in the host's shared folders), disk_budget
(what a fallback sandbox may write in all, and the watchdog where no tmpfs caps it), workdir (the private copy), output (per-call output capture), cgroups (per-sandbox
cgroups: the layout probe and each sandbox's group), cgroup_scope (a delegated scope, or what a
grader without cgroups lacks),
clock (CPU-time budgets), process (one worker process), session (Sandbox), resources (what a Sandbox must release), plotting (the shared
font list), forkserver_client (workers forked from a process that imported numpy and matplotlib
once); worker.py, nbrunner.py (with cell_outputs.py), lockdown.py (with seccomp_filter.py),
private_disk.py (the fallback's folder on a capped tmpfs) and warm_notebook.py run inside the sandbox,
forkserver.py beside it.
"""

from .codec import Rebuilt, Unsupported, WireError
from .launcher import (INSTALL_HINT, ISOLATION_ENV_VAR, ISOLATIONS, NOT_ISOLATED_WARNING, SandboxUnavailable,
                       bubblewrap_problem, isolation_from_env, resolve_isolation, rlimits_problem)
from .limits import Limits
from .outcomes import CallOutcome, MachineOverloaded, NotebookOutcome, SandboxError, TimeoutCause, refuse_overload
from .session import Call, Sandbox

__all__ = [
    "Call", "CallOutcome", "INSTALL_HINT", "ISOLATIONS", "ISOLATION_ENV_VAR", "Limits", "MachineOverloaded",
    "NOT_ISOLATED_WARNING", "NotebookOutcome", "Rebuilt", "Sandbox", "SandboxError", "SandboxUnavailable",
    "Unsupported", "WireError", "bubblewrap_problem", "isolation_from_env", "resolve_isolation",
    "TimeoutCause", "refuse_overload", "rlimits_problem",
]
