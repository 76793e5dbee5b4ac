"""What runs on a Dask worker: the connect-time probe and the grading task.

A worker grades with the engine a local batch uses (engine/executors.grade_one), in the same
sandbox: in each worker process the fork server is started once and the assignment is loaded
once (executors.prepare_process, as a local batch does before forking its graders), then every
submission is graded from its parcel's bytes in memory: the only copy written is the grader's
staging folder, as in a local run.

Student code must never reach the cluster: a scheduler or worker port is remote code execution
as the worker's user. Under bubblewrap the sandbox has a network namespace of its own, so no
port of the host is reachable; under rlimits it shares the host's network, so a worker grades
only if its cluster speaks TLS with a key student code cannot read (`rlimits_problem`). Each
task checks again what the probe checked: a worker that joined after the connect-time check
is held to the same rules.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from autograder.cluster.errors import ClusterRefused
from autograder.cluster.kit_version import kit_version, mismatch
from autograder.cluster.parcel import Parcel
from autograder.engine.assignment import load_assignment
from autograder.engine.executors import Job, Outcome, Submission, grade_one, prepare_process

_lock = threading.Lock()
_prepared: set[tuple[str, str]] = set()


def probe(isolation: str, dask_worker=None) -> dict:
    """Run on every worker at connect time: its kit, and why it cannot isolate student code (or None)."""
    return {"kit": kit_version(), "problem": isolation_problem(isolation, _address(dask_worker), _tls_key(dask_worker))}


def grade_parcel(parcel: Parcel, job: Job, expected: dict, student: tuple[str, str] | None = None) -> Outcome:
    """(SubmissionResult, None), or (None, error text) when the grader failed on this student, as
    executors.grade_one returns them. Raises ClusterRefused where this worker must not grade."""
    from distributed import get_worker

    worker = get_worker()
    line = mismatch(f"worker {worker.address}", expected, kit_version())
    if line:
        raise ClusterRefused(line)
    problem = isolation_problem(job.isolation, worker.address, _tls_key(worker))
    if problem:
        raise ClusterRefused(f"worker {worker.address} cannot isolate student code: {problem}")
    _prepare(job)
    return grade_one(job, Submission(parcel.student_files(load_assignment(job.assignment).config), student))


def _prepare(job: Job) -> None:
    """Once per worker process: the fork server (where it applies) and the loaded assignment."""
    with _lock:
        if (job.assignment, job.isolation) in _prepared:
            return
        prepare_process(job, fork_server=True)
        _prepared.add((job.assignment, job.isolation))


def isolation_problem(isolation: str, address: str, tls_key: str | None) -> str | None:
    """Why this worker must not grade under `isolation`, or None: it cannot isolate that way
    here, or the isolation shares this machine's network and the cluster's port is open to it."""
    from autograder.sandbox import SandboxUnavailable, confinement

    try:
        chosen = confinement.choose(isolation)
    except SandboxUnavailable as err:
        return str(err)
    return keys_in_sandbox_problem(tls_key) or (None if chosen.sealed_network else rlimits_problem(address, tls_key))


def keys_in_sandbox_problem(tls_key: str | None) -> str | None:
    """A sandbox sees the Python install read-only (bwrap.visible_host_paths): a TLS key kept there,
    or a Dask config file holding one (sys.prefix/etc/dask is one of Dask's config folders), is
    student code's to read and hand out in its output, whatever its network. Under a worker that
    is not root the sandbox even runs as the worker's own uid, so mode 600 does not close it."""
    from autograder.sandbox.bwrap import visible_host_paths

    visible = [root.resolve() for root in visible_host_paths()]
    for role, key in [("worker", tls_key), *_other_keys()] if tls_key else _other_keys():
        for path in _config_files_holding(key) if "-----BEGIN" in key else [key]:
            real = Path(path).resolve()
            root = next((r for r in visible if real == r or r in real.parents), None)
            if root is not None:
                return (f"the {role}'s TLS key ({path}) lies in {root}, which every sandbox reads: student "
                        f"code could hand it out in its output and join the cluster; keep keys and the Dask "
                        f"config holding them outside it (e.g. ~/.config/dask, mode 600)")
    return None


def rlimits_problem(address: str, tls_key: str | None) -> str | None:
    """Under rlimits student code shares this machine's network: the worker's port must be TLS
    (mutual: no connection without a certificate the cluster's CA signed) and its key must not be
    readable by student code (a file closed to every other uid, or a key held only in memory:
    inline, and no Dask config file other users can read holds it); nor may any other TLS key
    this machine's Dask config names (the scheduler's, a client's)."""
    if not address.startswith("tls://"):
        return (f"under rlimits student code shares this machine's network and {address} takes plain TCP "
                f"(anyone who reaches it runs code as this worker's user): use bubblewrap, or a TLS cluster")
    if tls_key is None:
        return "under rlimits the worker's TLS key must be known (distributed.comm.tls.worker.key)"
    # Any key the cluster's CA signed joins the cluster: the scheduler's or a client's kept on this
    # machine (a head node that is a worker too) counts as much as the worker's own.
    for role, key in [("worker", tls_key), *_other_keys()]:
        problem = _key_problem(key, role)
        if problem:
            return problem
    return None


def _key_problem(key: str, role: str) -> str | None:
    if "-----BEGIN" in key:
        # Given inline: in memory, unless it came from a Dask config file student code can read.
        for path in _config_files_holding(key):
            problem = _open_to_others(path, f"Dask config file {path}, which holds the {role}'s TLS key,")
            if problem:
                return problem
        return None
    return _open_to_others(key, f"the {role}'s TLS key {key}")


def _other_keys() -> list[tuple[str, str]]:
    """(role, key) of the scheduler's and the client's TLS keys this machine's Dask config names
    (the certificate where it carries the key too)."""
    import dask.config

    keys = []
    for role in ("scheduler", "client"):
        key = dask.config.get(f"distributed.comm.tls.{role}.key", None) or \
            dask.config.get(f"distributed.comm.tls.{role}.cert", None)
        if key:
            keys.append((role, key))
    return keys


def _open_to_others(path, what: str) -> str | None:
    """Why another uid (student code under rlimits) could read `path`, or None."""
    try:
        info = os.stat(path)
    except OSError as err:
        return f"cannot inspect {what}: {err.strerror}"
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) or info.st_uid != os.geteuid():
        return (f"{what} is readable by other users (mode {stat.filemode(info.st_mode)}): "
                f"student code could join the cluster; chmod 600 it, owned by the worker's user")
    return None


def _config_files_holding(key: str) -> list:
    """The YAML/JSON files Dask read its configuration from (dask.config.paths, where an inline key
    is usually written, /etc/dask world-readable by default) that hold this key."""
    import dask.config

    wanted = "".join(key.split())
    held = []
    for path, config in dask.config.collect_yaml(dask.config.paths, return_paths=True):
        if any("".join(value.split()) == wanted for value in _strings(config)):
            held.append(path)
    return held


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _address(worker) -> str:
    return worker.address if worker is not None else "?"


def _tls_key(worker) -> str | None:
    """The worker's TLS key (a path or inline PEM); the certificate when it carries the key too."""
    security = getattr(worker, "security", None)
    if security is None:
        return None
    return getattr(security, "tls_worker_key", None) or getattr(security, "tls_worker_cert", None)
