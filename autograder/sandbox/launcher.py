"""How a worker process is started: `launch_plan` asks the grader's confinement for the plan of
the isolation it grades with (bwrap.py: the bubblewrap command line; uid_fallback.py: the
explicit rlimits fallback; worker_plan.py: what both give every worker).

Isolation fails closed: without a working bubblewrap nothing is graded unless the caller asks for
"rlimits" explicitly, and the fallback runs only where it can still keep the project private
(`rlimits_problem`). Anywhere else `resolve_isolation("rlimits")` refuses and says why.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Mapping

from . import confinement
from .bwrap import (BwrapFeatures, _bwrap_prefix, _readonly_binds, bubblewrap_plan,  # noqa: F401 - their old home
                    bubblewrap_problem, bwrap_features)
from .confinement import INSTALL_HINT, ISOLATION_ENV_VAR, SandboxUnavailable  # noqa: F401 - their old home
from .limits import Limits
from .uid_fallback import (PRIVATE_SCRATCH, SHARED_SCRATCH, _closed_ancestor, _missing_capabilities,  # noqa: F401
                           _paths_the_worker_reads, _start_as_sandbox_uid, _unreachable, fallback_plan,
                           network_namespace_problem, rlimits_problem, sandbox_uid_problem, warn_not_isolated)
from .worker_plan import (INSIDE_WORKDIR, INSIDE_WORKER_DIR, NOT_ISOLATED_WARNING, PROJECT_ROOT,  # noqa: F401
                          SANDBOX_GID, SANDBOX_UID, SCRATCH_WORKDIR, WORKER_FILES, LaunchPlan, _base_env,
                          _checked_env, processes_of)

ISOLATIONS = confinement.CHOICES


def resolve_isolation(requested: str = confinement.DEFAULT.name) -> str:
    """The name of the isolation `requested` gets here (confinement.choose: ValueError for an
    unknown name, SandboxUnavailable, with one line saying why and what to do, where it cannot
    work). Both machine probes run once per process."""
    return confinement.choose(requested).name


def isolation_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The isolation the nbgrader path asks for (confinement.from_env), by name."""
    return confinement.from_env(environ).name


def launch_plan(isolation: "str | confinement.Isolation", workdir: Path, private_dir: Path, limits: Limits, *,
                uid: int = SANDBOX_UID, env: Mapping[str, str] | None = None,
                cpus: tuple[int, ...] | None = None) -> LaunchPlan:
    """The plan for a worker in `workdir` (the submission copy) with `private_dir` (a host
    directory of this sandbox only, for HOME/TMPDIR and the worker's files in the fallback).

    A root grader's worker switches to host uid (and gid) `uid`, which should be this sandbox's
    own (`uids.claim_uid()`). `env` adds variables the caller's code in the sandbox reads (e.g.
    the notebook's check() helper); it cannot replace the base environment. The fallback
    refuses (SandboxUnavailable) where `rlimits_problem()` says it cannot keep the project
    private; otherwise `private_dir` is handed over to `uid` and closed to every other uid.
    `cpus` (placement.claim) are the only CPUs the worker and all it starts may run on."""
    plan = confinement.asked(isolation).plan(workdir, private_dir, limits, uid=uid, env=_checked_env(env or {}))
    return replace(plan, cpus=tuple(cpus)) if cpus else plan
