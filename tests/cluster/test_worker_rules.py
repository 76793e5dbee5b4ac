"""The rules a worker holds itself to before grading, and what makes two kits the same."""

from __future__ import annotations

import subprocess
import sys

from autograder.cluster.kit_version import kit_version, mismatch
from autograder.cluster.worker_side import rlimits_problem
from course_copy import clean_env, copy_course

KEY = "-----BEGIN PRIVATE KEY-----\nMIIE...\n-----END PRIVATE KEY-----\n"


def test_rlimits_grades_only_behind_tls_with_a_key_student_code_cannot_read(tmp_path):
    key = tmp_path / "worker.key"
    key.write_text(KEY)
    key.chmod(0o600)
    assert rlimits_problem("tls://10.0.0.5:40000", str(key)) is None
    assert rlimits_problem("tls://10.0.0.5:40000", KEY) is None   # held in memory only
    assert "plain TCP" in rlimits_problem("tcp://10.0.0.5:40000", str(key))
    assert "must be known" in rlimits_problem("tls://10.0.0.5:40000", None)
    key.chmod(0o640)
    assert "readable by other users" in rlimits_problem("tls://10.0.0.5:40000", str(key))
    key.chmod(0o604)
    assert "readable by other users" in rlimits_problem("tls://10.0.0.5:40000", str(key))


def _version_in(root):
    run = subprocess.run([sys.executable, "-c", "from autograder.cluster.kit_version import kit_version; "
                                                "print(repr(kit_version()))"],
                         cwd=root, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return eval(run.stdout)   # noqa: S307 - our own repr of a dict of strings


def test_the_kit_version_is_the_files_not_where_they_are(tmp_path):
    """Two checkouts in different folders are the same kit; one changed byte of the reference is
    another, and the mismatch line names both and what differs."""
    ours = kit_version()
    elsewhere = copy_course(tmp_path / "elsewhere")
    assert _version_in(elsewhere) == ours
    reference = elsewhere / "solutions" / "lec01_codesign" / "codesign.py"
    reference.write_bytes(reference.read_bytes() + b"\n")
    theirs = _version_in(elsewhere)
    assert theirs["sources"] != ours["sources"] and {**theirs, "sources": ours["sources"]} == ours
    line = mismatch("worker tcp://10.0.0.5:40000", ours, theirs)
    assert "\n" not in line and "worker tcp://10.0.0.5:40000" in line
    assert theirs["sources"] in line and ours["sources"] in line and "differ in sources" in line
    assert mismatch("worker tcp://10.0.0.5:40000", ours, dict(ours)) is None


def test_an_inline_key_from_a_config_file_other_users_read_is_refused(tmp_path, monkeypatch):
    """"Given inline" is held in memory only when no file student code can read holds it: Dask
    reads an inline key from its YAML files (/etc/dask is world-readable by default), and under
    rlimits student code runs as another uid on the worker's own files."""
    import dask.config
    import yaml

    folder = tmp_path / "etc-dask"
    folder.mkdir()
    config = folder / "distributed.yaml"
    config.write_text(yaml.safe_dump({"distributed": {"comm": {"tls": {"worker": {"key": KEY}}}}}))
    config.chmod(0o644)
    monkeypatch.setattr(dask.config, "paths", [str(folder)])
    problem = rlimits_problem("tls://10.0.0.5:40000", KEY)
    assert problem is not None and str(config) in problem and "readable by other users" in problem
    config.chmod(0o600)
    assert rlimits_problem("tls://10.0.0.5:40000", KEY) is None
    config.chmod(0o644)
    config.write_text(yaml.safe_dump({"distributed": {"comm": {"tls": {"ca-file": "/etc/dask/ca.pem"}}}}))
    assert rlimits_problem("tls://10.0.0.5:40000", KEY) is None   # another file's key: not this one


def test_a_scheduler_or_client_key_other_users_read_is_refused_too(tmp_path):
    """Any certificate the cluster's CA signed joins the cluster: a head node that is also a worker
    keeps the scheduler's key, the instructor's machine a client's."""
    import dask.config

    worker_key = tmp_path / "worker.key"
    worker_key.write_text(KEY)
    worker_key.chmod(0o600)
    for role in ("scheduler", "client"):
        key = tmp_path / f"{role}.key"
        key.write_text(KEY)
        key.chmod(0o644)
        with dask.config.set({f"distributed.comm.tls.{role}.key": str(key)}):
            problem = rlimits_problem("tls://10.0.0.5:40000", str(worker_key))
            assert problem is not None and f"the {role}'s TLS key {key}" in problem
            key.chmod(0o600)
            assert rlimits_problem("tls://10.0.0.5:40000", str(worker_key)) is None


def test_a_key_in_what_every_sandbox_reads_is_refused_under_bubblewrap_too(tmp_path, monkeypatch):
    """bubblewrap seals the network, not the Python install it binds read-only: a key kept there
    (or a Dask config in sys.prefix/etc/dask holding one inline) leaves in a student's output."""
    import dask.config
    import yaml

    from autograder.cluster.worker_side import isolation_problem
    from autograder.sandbox import bwrap

    install = tmp_path / "venv"
    (install / "etc" / "dask").mkdir(parents=True)
    monkeypatch.setattr(bwrap, "visible_host_paths", lambda: [install])
    key = install / "etc" / "dask" / "worker.key"
    key.write_text(KEY)
    key.chmod(0o600)
    problem = isolation_problem("bubblewrap", "tls://10.0.0.5:40000", str(key))
    assert problem is not None and f"the worker's TLS key ({key}) lies in {install}" in problem

    config = install / "etc" / "dask" / "distributed.yaml"
    config.write_text(yaml.safe_dump({"distributed": {"comm": {"tls": {"client": {"key": KEY}}}}}))
    config.chmod(0o600)
    monkeypatch.setattr(dask.config, "paths", [str(config.parent)])
    with dask.config.set({"distributed.comm.tls.client.key": KEY}):
        problem = isolation_problem("bubblewrap", "tls://10.0.0.5:40000", None)
    assert problem is not None and f"the client's TLS key ({config})" in problem

    outside = tmp_path / "home" / "worker.key"
    outside.parent.mkdir()
    outside.write_text(KEY)
    outside.chmod(0o600)
    config.unlink()
    assert isolation_problem("bubblewrap", "tls://10.0.0.5:40000", str(outside)) is None
