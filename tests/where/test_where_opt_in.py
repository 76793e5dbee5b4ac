"""A test run starts no daemon and boots no VM unless asked: without CS349E_TEST_DOCKER=1 no
dockerd is started (even as root, with none running), without CS349E_TEST_VM=1 no VM; each
skip reason names the variable."""

import subprocess

import pytest

import process_groups
from where import docker_gradescope as gs
from where import vm


@pytest.fixture
def nothing_may_start(monkeypatch):
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a) or pytest.fail(f"started {a}"))
    monkeypatch.setattr(process_groups, "start", lambda *a, **k: started.append(a) or pytest.fail(f"started {a}"))
    monkeypatch.setattr(gs, "_docker", lambda *a, **k: subprocess.CompletedProcess(a, 1, "", "no daemon"))
    return started


@pytest.mark.parametrize("value", [None, "0", "yes"])
def test_no_dockerd_is_started_unless_asked(monkeypatch, nothing_may_start, value):
    if value is None:
        monkeypatch.delenv("CS349E_TEST_DOCKER", raising=False)
    else:
        monkeypatch.setenv("CS349E_TEST_DOCKER", value)
    problem = gs.daemon_problem()
    assert nothing_may_start == []
    assert problem is not None and "CS349E_TEST_DOCKER=1" in problem


def test_no_vm_is_booted_unless_asked(monkeypatch):
    monkeypatch.delenv("CS349E_TEST_VM", raising=False)
    problem = vm.machine_problem()
    assert problem is not None and "CS349E_TEST_VM=1" in problem


def test_ci_asks_for_both():
    from core.script_output import REPO

    ci = (REPO / ".ci" / "run").read_text()
    assert "CS349E_TEST_DOCKER=1" in ci and "CS349E_TEST_VM=1" in ci
