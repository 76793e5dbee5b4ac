"""The secrets a container platform mounts for the grader's processes: Kubernetes' service account
token (`/var/run/secrets/kubernetes.io/serviceaccount/token`, mode 0644 by default, through the
links `..data/`), Docker's and Compose's secrets (`/run/secrets/<name>`, mode 0444). Under the
uid fallback student code runs as another uid on the grader's filesystem: where its worker cannot
make a mount namespace (a container's default profile, the kit's supported grading pod) nothing
covers `/run`, and student code read the pod's token into its output (the token speaks for the
grading pod to the cluster's API, which the fallback's shared network reaches). The fallback
refuses there, naming the file; with a mount namespace `/run` is covered and it runs."""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

import pytest
from sandbox_helpers import needs_rlimits

from autograder.sandbox import SandboxUnavailable, uid_fallback

pytestmark = needs_rlimits

READER = {"codesign.py": """
def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
"""}


@pytest.fixture
def service_account_token():
    """The pod's token as Kubernetes mounts it: a projected volume of timestamped folders, the
    file a link through `..data`, mode 0644 (the volume's default)."""
    top = Path("/run/secrets")
    if top.exists():
        pytest.skip("this machine has platform secrets of its own in /run/secrets")
    folder = top / "kubernetes.io" / "serviceaccount"
    stamped = folder / "..2026_12_06_14_00_00.123456789"
    try:
        stamped.mkdir(parents=True)
        token = secrets.token_hex(24)
        (stamped / "token").write_text(token)
        os.chmod(stamped / "token", 0o644)
        os.symlink(stamped.name, folder / "..data")
        os.symlink("..data/token", folder / "token")
        _fresh_probes()
        yield folder / "token", token
    finally:
        shutil.rmtree(top, ignore_errors=True)
        _fresh_probes()


def _fresh_probes():
    for probe in (uid_fallback.rlimits_problem, getattr(uid_fallback, "mount_namespace_problem", None)):
        if probe is not None:
            probe.cache_clear()


def test_without_a_mount_namespace_a_readable_platform_secret_refuses_the_fallback(
        sandbox, service_account_token, monkeypatch):
    path, token = service_account_token
    monkeypatch.setattr(uid_fallback, "PRIVATE_SCRATCH", False)   # as in a container's default profile
    with pytest.raises(SandboxUnavailable, match="readable by other users") as refused:
        box = sandbox(READER, isolation="rlimits")
        seen = box.call("codesign", "read", (str(path),)).value
        assert token not in seen, "student code read the grading pod's service account token"
    assert str(path.parent) in str(refused.value)


def test_with_a_mount_namespace_the_secret_is_covered_and_the_fallback_runs(sandbox, service_account_token):
    path, token = service_account_token
    box = sandbox(READER, isolation="rlimits")
    seen = box.call("codesign", "read", (str(path),)).value
    assert box.private_scratch and token not in seen and seen.startswith("unreadable"), seen
