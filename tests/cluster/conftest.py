"""One real dask cluster on loopback for the module: a `dask scheduler` and two `dask worker`
processes started from this checkout, and a client the tests use to watch it."""

from __future__ import annotations

import pytest

from autograder.engine.registry import REPO_ROOT
from autograder.sandbox import bubblewrap_problem
from dask_processes import DaskProcesses, wait_for_worker

WORKERS = ("worker-a", "worker-b")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    distributed = pytest.importorskip("distributed", reason="the cluster tests need pip install '.[cluster]'")
    problem = bubblewrap_problem()
    if problem:
        pytest.skip(f"cluster workers grade only under bubblewrap: {problem}")
    processes = DaskProcesses(tmp_path_factory.mktemp("dask-logs"))
    try:
        address = processes.scheduler(cwd=REPO_ROOT)
        for name in WORKERS:
            processes.worker(address, name, cwd=REPO_ROOT)
        with distributed.Client(address, timeout=60, set_as_default=False) as client:
            for name in WORKERS:
                wait_for_worker(client, name)
            client.get_task_stream()   # starts recording which worker ran each task
            processes.address, processes.client = address, client
            yield processes
    finally:
        processes.stop()
