"""How the worker is started: what the bubblewrap command line exposes, and the fallback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_helpers import FAST, needs_bwrap, needs_rlimits

from autograder.sandbox import SandboxUnavailable, isolation_from_env, resolve_isolation
from autograder.sandbox import bwrap, launcher
from autograder.sandbox.launcher import INSIDE_WORKDIR, PROJECT_ROOT, WORKER_FILES, launch_plan


def bind_pairs(argv: list[str], option: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, arg in enumerate(argv) if arg == option]


@needs_bwrap
def test_bubblewrap_exposes_only_the_copy_and_the_worker_files_of_the_project(tmp_path):
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "codesign.py").write_text("")
    plan = launch_plan("bubblewrap", tmp_path / "submission", tmp_path, FAST)
    argv = list(plan.prefix)
    # The working folder on the tmpfs links to each submitted file.
    assert ("/submission/codesign.py", "/tmp/work/codesign.py") in bind_pairs(argv, "--symlink")
    assert bind_pairs(argv, "--bind") == []   # nothing of the host disk is writable
    readonly = bind_pairs(argv, "--ro-bind")
    assert (str(tmp_path / "submission"), INSIDE_WORKDIR) in readonly
    from_project = sorted(src for src, _ in readonly if Path(src).is_relative_to(PROJECT_ROOT))
    venvs_inside = [p for p in {sys.prefix, sys.base_prefix} if Path(p).is_relative_to(PROJECT_ROOT)]
    assert from_project == sorted([str(PROJECT_ROOT / "autograder" / "sandbox" / n) for n in WORKER_FILES]
                                  + venvs_inside)
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert ("/usr", "/usr") in readonly


@needs_bwrap
def test_python_install_is_found_from_the_running_interpreter(tmp_path):
    argv = list(launch_plan("bubblewrap", tmp_path, tmp_path, FAST).prefix)
    sources = {src for src, _ in bind_pairs(argv, "--ro-bind")}
    for prefix in (sys.prefix, sys.base_prefix):
        assert any(prefix == s or Path(prefix).is_relative_to(s) for s in sources), prefix


def test_a_python_install_containing_the_project_is_refused(monkeypatch):
    """A virtualenv *above* the project would expose solutions/; refuse rather than leak."""
    monkeypatch.setattr(sys, "prefix", str(PROJECT_ROOT.parent))
    with pytest.raises(SandboxUnavailable, match="contains the project"):
        launcher._readonly_binds()


@pytest.fixture
def fresh_bubblewrap_probe():
    """The probe's answer is cached per process; a test that fakes the machine starts and ends
    with a fresh one."""
    probes = (launcher.bwrap_features, launcher.bubblewrap_problem)
    for probe in probes:
        probe.cache_clear()
    yield
    for probe in probes:
        probe.cache_clear()


def test_without_bwrap_every_request_but_rlimits_refuses_naming_bubblewrap(monkeypatch, fresh_bubblewrap_probe):
    monkeypatch.setattr(bwrap.shutil, "which", lambda _name: None)
    for requested in ("bubblewrap", "auto"):   # "auto" no longer falls back on its own
        with pytest.raises(SandboxUnavailable) as refused:
            resolve_isolation(requested)
        message = str(refused.value)
        assert "bwrap is not installed" in message and "apt-get install bubblewrap" in message
        assert "--isolation rlimits" in message and "CS349E_ISOLATION=rlimits" in message
        assert "\n" not in message


def test_bubblewrap_is_probed_once_per_process(monkeypatch, fresh_bubblewrap_probe):
    looked_up = []
    monkeypatch.setattr(bwrap.shutil, "which", lambda name: looked_up.append(name))
    for _ in range(3):
        with pytest.raises(SandboxUnavailable):
            resolve_isolation("bubblewrap")
    assert looked_up == ["bwrap"]


@pytest.mark.parametrize("value, expected", [(None, "bubblewrap"), ("", "bubblewrap"),
                                             ("bubblewrap", "bubblewrap"), ("rlimits", "rlimits")])
def test_the_nbgrader_path_lowers_isolation_only_through_its_variable(value, expected):
    environ = {} if value is None else {"CS349E_ISOLATION": value}
    assert isolation_from_env(environ) == expected


def test_a_misspelt_isolation_variable_is_refused():
    with pytest.raises(SandboxUnavailable, match="CS349E_ISOLATION must be"):
        isolation_from_env({"CS349E_ISOLATION": "none"})


def test_unknown_isolation_is_a_value_error():
    with pytest.raises(ValueError, match="isolation"):
        resolve_isolation("docker")


@needs_rlimits
def test_fallback_warns_loudly_once_per_process(tmp_path):
    """Two rlimits sandboxes in one process: the warning appears on stderr exactly once."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "codesign.py").write_text("def f():\n    return 1\n")
    script = (
        "from pathlib import Path\n"
        "from autograder.sandbox import Sandbox\n"
        "for _ in range(2):\n"
        f"    with Sandbox(Path({str(tmp_path / 'sub')!r}), isolation='rlimits') as box:\n"
        "        print(box.isolation, box.call('codesign', 'f').value)\n")
    run = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_ROOT, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "rlimits 1\nrlimits 1\n"
    assert run.stderr.count("isolation 'rlimits', asked explicitly") == 1
    assert "WARNING" in run.stderr