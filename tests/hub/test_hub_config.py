"""deploy/jupyterhub/: the hub configuration as JupyterHub reads it, for one course and for two
side by side (each course's students and formgrader kept to that course), and the courses file's
clear errors. Fast: no hub starts (tests/hub/test_hub_browser.py runs one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets.config.loader import PyFileConfigLoader

from hub_machine import DEPLOY
from hub_courses import CoursesError, load_hub


def hub_config(monkeypatch, courses: Path):
    monkeypatch.setenv("CS349E_HUB_COURSES", str(courses))
    return PyFileConfigLoader("jupyterhub_config.py", path=str(DEPLOY)).load_config()


def _role(config, name):
    return next(r for r in config.JupyterHub.load_roles if r["name"] == name)


def test_one_course(monkeypatch):
    config = hub_config(monkeypatch, DEPLOY / "courses.toml")
    assert config.JupyterHub.spawner_class == "jupyterhub.spawner.LocalProcessSpawner"
    assert config.JupyterHub.authenticator_class == "jupyterhub.auth.PAMAuthenticator"
    [service] = config.JupyterHub.services
    assert service["user"] == "grader-cs349e" and service["cwd"] == "/home/grader-cs349e/cs349e"
    assert config.JupyterHub.load_groups["formgrade-cs349e"]["users"] == ["instructor", "ta", "grader-cs349e"]
    assert config.JupyterHub.load_groups["nbgrader-cs349e"]["users"] == ["alice", "bob"]


def test_the_students_names_are_read_for_their_course():
    hub = load_hub(DEPLOY / "courses-two.toml")
    names = {course.id: course.names for course in hub.courses}
    assert set(names["cs349e"]) == {"alice", "bob"} and set(names["cs349f"]) == {"carol"}
    assert all(first and last for course in names.values() for first, last in course.values())


def test_two_courses_keep_their_students_and_formgraders_apart(monkeypatch):
    config = hub_config(monkeypatch, DEPLOY / "courses-two.toml")
    groups = config.JupyterHub.load_groups
    assert "carol" not in groups["nbgrader-cs349e"]["users"] and "carol" not in groups["formgrade-cs349e"]["users"]
    assert not {"alice", "bob"} & set(groups["nbgrader-cs349f"]["users"] + groups["formgrade-cs349f"]["users"])
    # Opening a course's formgrader is granted to that course's formgrade group only.
    for course in ("cs349e", "cs349f"):
        role = _role(config, f"formgrade-{course}")
        assert role["groups"] == [f"formgrade-{course}"]
        assert role["scopes"] == [f"access:services!service={course}"]
        assert _role(config, f"nbgrader-{course}")["scopes"] == []
        # A course's formgrader may add students to its own course's group, no other.
        grader = _role(config, f"grader-{course}")
        assert grader["services"] == [course]
        assert [s for s in grader["scopes"] if s.startswith("groups")] == [f"groups!group=nbgrader-{course}"]
    services = {s["name"]: s for s in config.JupyterHub.services}
    assert services["cs349e"]["user"] != services["cs349f"]["user"]
    assert services["cs349e"]["url"] != services["cs349f"]["url"]


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('id = "cs349f"', 'id = "cs349e"'), "two courses share a id"),
    (lambda t: t.replace("port = 9998", "port = 9999"), "two courses share a port"),
    (lambda t: t.replace('students = ["carol"]', 'students = ["Carol; rm"]'), "is not a valid name"),
    (lambda t: t.replace("port = 9998", 'port = "x"'), "port must be a number"),
    (lambda t: t.replace('carol = {', 'dave = {'), "'dave' is not one of the course's students"),
    (lambda t: t.replace('first = "子涵"', 'first = "子涵\\u001b[2J"'), "is not a name"),
    (lambda t: t.replace('first = "子涵", ', ''), "give { first = ..., last = ... }"),
])
def test_a_wrong_courses_file_is_named(tmp_path, edit, message):
    courses = tmp_path / "courses.toml"
    courses.write_text(edit((DEPLOY / "courses-two.toml").read_text()))
    with pytest.raises(CoursesError, match=message):
        load_hub(courses)


def test_the_course_folder_gets_every_file_of_the_kit_but_its_tests_and_a_courses_data():
    """setup_hub.py copies the kit into each course folder: every tracked file the course reads
    (the feedback page's template among them) is copied."""
    import subprocess

    import setup_hub

    kit = setup_hub.KIT
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=kit, capture_output=True, text=True, check=True).stdout
    left_out = []
    for name in filter(None, tracked.split("\0")):
        path = kit / name
        for folder in [kit, *reversed(path.relative_to(kit).parents[:-1])]:
            folder = kit / folder if folder != kit else kit
            child = path.relative_to(folder).parts[0]
            if child in setup_hub.not_copied(str(folder), [child]):
                left_out.append(name)
                break
    expected = {name for name in left_out if name.split("/")[0] in {"tests", "benchmarks", "artifacts"}}
    assert set(left_out) == expected, sorted(set(left_out) - expected)
    assert "autograder/nbgrader_bridge/templates/feedback/index.html.j2" not in left_out


def test_a_users_server_reads_no_settings_from_her_home(monkeypatch):
    """A ~/.jupyter/jupyter_server_config.py of a student's own would make her server serve pages
    without a login on the hub's address (tests/hub/test_hub_origin.py runs it in a browser)."""
    config = hub_config(monkeypatch, DEPLOY / "courses.toml")
    assert config.Spawner.disable_user_config is True
    assert config.Spawner.environment["PYTHONNOUSERSITE"] == "1"


def test_the_hub_starts_on_one_origin_only_where_the_courses_file_accepts_it(tmp_path, monkeypatch, capsys):
    """Every user's server on the hub's origin lets a student who takes her server's port serve the
    instructor a page that runs with the instructor's session: refused unless the file says so."""
    from user_origins import refuse_shared_origin, shared_origin_problem

    text = (DEPLOY / "courses.toml").read_text()
    shipped = load_hub(DEPLOY / "courses.toml")
    assert shared_origin_problem(shipped) is not None and not shipped.shared_origin_accepted
    with pytest.raises(SystemExit):
        refuse_shared_origin(shipped)
    assert "not starting the hub" in capsys.readouterr().err

    accepted = tmp_path / "accepted.toml"
    accepted.write_text('shared_origin = "accept"\n' + text)
    refuse_shared_origin(load_hub(accepted))
    assert "WARNING" in capsys.readouterr().err

    subdomains = tmp_path / "subdomains.toml"
    subdomains.write_text('subdomain_host = "https://hub.example.edu"\n' + text)
    hub = load_hub(subdomains)
    assert shared_origin_problem(hub) is None
    monkeypatch.setenv("CS349E_HUB_COURSES", str(subdomains))
    assert hub_config(monkeypatch, subdomains).JupyterHub.subdomain_host == "https://hub.example.edu"

    wrong = tmp_path / "wrong.toml"
    wrong.write_text('shared_origin = "yes"\n' + text)
    with pytest.raises(CoursesError, match="shared_origin must be"):
        load_hub(wrong)


def test_every_jupyterlab_the_hub_starts_keeps_its_kernels_on_files(monkeypatch):
    """Over TCP a kernel's IOPub port publishes every cell's code and output to any account of the
    machine (tests/hub/test_hub_kernels.py listens as a classmate)."""
    config = hub_config(monkeypatch, DEPLOY / "courses-two.toml")
    assert "--KernelManager.transport=ipc" in config.Spawner.args
    for service in config.JupyterHub.services:
        assert "--KernelManager.transport=ipc" in service["command"], service["name"]


def _hub_env_courses(tmp_path: Path) -> Path:
    courses = tmp_path / "courses.toml"
    courses.write_text((DEPLOY / "courses.toml").read_text().replace('hub_env = "/opt/cs349e-hub/venv"',
                                                                     f'hub_env = "{tmp_path / "env"}"'))
    return courses


def test_nbgraders_own_kernels_are_on_files_in_the_users_runtime_folder(tmp_path, monkeypatch):
    """The Validate button runs the student's notebook in a kernel nbgrader starts itself: on files
    of her runtime folder, a fresh name each time the settings are read."""
    import setup_hub
    from shared_settings import settings_path

    hub = load_hub(_hub_env_courses(tmp_path))
    setup_hub.write_global_config(hub)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("JUPYTER_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    path = settings_path(hub)
    first, second = (PyFileConfigLoader(path.name, path=str(path.parent)).load_config() for _ in range(2))
    runtime = tmp_path / "home" / ".local" / "share" / "jupyter" / "runtime"
    assert first.KernelManager.transport == "ipc"
    assert Path(first.KernelManager.ip).parent == runtime and first.KernelManager.ip != second.KernelManager.ip
    assert runtime.stat().st_mode & 0o077 == 0


def test_the_hub_starts_only_on_the_kits_own_nbgrader_settings(tmp_path, capsys):
    """A shared environment set up by an older kit (Validate's kernel on ports) or edited is refused,
    with the command that writes the settings again."""
    import setup_hub
    from shared_settings import refuse_stale_settings, settings_path

    courses = _hub_env_courses(tmp_path)
    hub = load_hub(courses)
    with pytest.raises(SystemExit):
        refuse_stale_settings(hub, str(courses))
    setup_hub.write_global_config(hub)
    refuse_stale_settings(hub, str(courses))
    older = settings_path(hub).read_text().split("# The kernel nbgrader starts itself")[0]
    settings_path(hub).write_text(older)
    with pytest.raises(SystemExit):
        refuse_stale_settings(hub, str(courses))
    said = capsys.readouterr().err
    assert "not starting the hub" in said and f"python3 deploy/jupyterhub/setup_hub.py {courses}" in said


def test_the_hub_starts_only_without_a_kernel_debugger_in_its_environment(tmp_path, capsys):
    """debugpy listens on a port anyone can attach to once a student turns the debugger off
    (tests/hub/test_hub_kernels.py runs the set-up, which removes it): refused at start."""
    import importlib.util
    import sys

    from kernel_debugger import has_debugger, refuse_debugger

    if importlib.util.find_spec("debugpy") is None:
        pytest.skip("debugpy is not installed here")
    courses = _hub_env_courses(tmp_path)
    hub = load_hub(courses)
    (hub.hub_env / "bin").mkdir(parents=True)
    python = hub.hub_env / "bin" / "python"   # an environment with debugpy: this one
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    assert has_debugger(hub)
    with pytest.raises(SystemExit):
        refuse_debugger(hub, str(courses))
    said = capsys.readouterr().err
    assert "has debugpy" in said and f"python3 deploy/jupyterhub/setup_hub.py {courses}" in said
