"""bubblewrap's options are chosen by what the installed bwrap accepts: 0.7+ (Debian 12: 0.8)
makes a size-capped /tmp with --perms/--size; 0.5/0.6 (Ubuntu 22.04: 0.6.1) reject those before
--tmpfs, so /tmp is opened with --chmod and RLIMIT_FSIZE caps each file. Tested with a stand-in
for 0.6.1 that rejects the newer options and passes the rest to the real bwrap."""

from __future__ import annotations

import subprocess
from dataclasses import replace

import pytest
from bwrap_standin import REJECTED_PERMS, write_bwrap_06
from sandbox_helpers import FAST, needs_bwrap

from autograder.sandbox import Sandbox, bwrap, launcher

PROBE = {"codesign.py": """
    import os, stat

    def tmp_mode():
        return oct(stat.S_IMODE(os.stat("/tmp").st_mode))

    def write(path, size):
        try:
            with open(path, "wb") as out:
                out.write(b"x" * size)
        except OSError as exc:
            return type(exc).__name__
        return os.path.getsize(path)
"""}
SMALL_FILES = replace(FAST, file_bytes=1024**2)


@pytest.fixture
def fresh_probe():
    """The probes are once per process; these tests change the bwrap on PATH."""
    probes = (launcher.bwrap_features, launcher.bubblewrap_problem)   # before any monkeypatch
    for probe in probes:
        probe.cache_clear()
    yield
    for probe in probes:
        probe.cache_clear()


@pytest.fixture
def bwrap_06(tmp_path, monkeypatch, fresh_probe):
    folder = write_bwrap_06(tmp_path / "bwrap-0.6")
    monkeypatch.setenv("PATH", f"{folder}:{bwrap.os.environ['PATH']}")
    return folder / "bwrap"


@needs_bwrap
def test_the_stand_in_rejects_what_0_6_rejects(bwrap_06):
    """Without the version probe the newer command line fails exactly as on Ubuntu 22.04."""
    old_line = [str(bwrap_06), "--ro-bind", "/", "/", "--perms", "1777", "--tmpfs", "/tmp", "true"]
    done = subprocess.run(old_line, capture_output=True, text=True)
    assert done.returncode == 1 and REJECTED_PERMS in done.stderr


@needs_bwrap
def test_bwrap_0_6_gets_chmod_instead_of_perms_and_size(bwrap_06, submission):
    features = launcher.bwrap_features()
    assert features.path == str(bwrap_06) and "0.6.1" in features.version
    assert (features.tmpfs_options, features.chmod) == (False, True)
    assert launcher.bubblewrap_problem() is None
    prefix = list(launcher.launch_plan("bubblewrap", submission(PROBE), submission(PROBE, "p"), FAST).prefix)
    assert prefix[0] == str(bwrap_06) and "--size" not in prefix
    assert prefix[prefix.index("--tmpfs") + 1:][:3] == ["/tmp", "--chmod", "1777"]


@needs_bwrap
def test_the_sandbox_under_bwrap_0_6_has_a_shared_tmp_and_capped_files(bwrap_06, sandbox):
    box = sandbox(PROBE, limits=SMALL_FILES)
    assert box.isolation == "bubblewrap"
    assert box.call("codesign", "tmp_mode").value == "0o1777"
    assert box.call("codesign", "write", ("/tmp/small", 1000)).value == 1000
    assert box.call("codesign", "write", ("/tmp/big", 2 * SMALL_FILES.file_bytes)).value == "OSError"


@needs_bwrap
def test_a_newer_bwrap_gets_a_size_capped_tmp(fresh_probe, sandbox):
    features = launcher.bwrap_features()
    if not features.tmpfs_options:
        pytest.skip(f"the installed {features.version} is older than 0.7")
    prefix = launcher._bwrap_prefix(None, SMALL_FILES)
    at = prefix.index("/tmp")
    assert prefix[at - 5:at] == ["--perms", "1777", "--size", str(SMALL_FILES.file_bytes), "--tmpfs"]
    box = sandbox(PROBE, limits=SMALL_FILES)
    # The tmpfs holds at most file_bytes in all: two files of 0.75 MiB do not fit.
    assert box.call("codesign", "write", ("/tmp/a", 3 * 1024**2 // 4)).value == 3 * 1024**2 // 4
    assert box.call("codesign", "write", ("/tmp/b", 3 * 1024**2 // 4)).value == "OSError"


@needs_bwrap
def test_a_bwrap_too_old_for_either_way_is_refused(monkeypatch, fresh_probe):
    monkeypatch.setattr(bwrap, "bwrap_features", lambda: launcher.BwrapFeatures(
        "/usr/bin/bwrap", "bubblewrap 0.4.1", tmpfs_options=False, chmod=False))
    problem = launcher.bubblewrap_problem()
    assert problem is not None and "0.4.1" in problem and "too old" in problem
