"""The kernel nbgrader's autograde starts: a real ipykernel in real bubblewrap, seen from inside."""

import json

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.nbgrader_bridge.isolation import kernel_isolation
from autograder.nbgrader_bridge.kernel_sandbox import SandboxedKernelManager
from autograder.sandbox import SandboxUnavailable, launcher

PROBE = r'''
import json, os, socket
from pathlib import Path

here = Path.cwd()
root = here.parents[2]


def outcome(action):
    try:
        action()
        return "done"
    except Exception as err:
        return type(err).__name__


def connect():
    socket.create_connection(("127.0.0.1", 22), timeout=2).close()


print(json.dumps({
    "cwd": str(here),
    "write_own_folder": outcome(lambda: (here / "mine.txt").write_text("x")),
    "read_course_file": outcome(lambda: (root / "secret.txt").read_text()),
    "write_course_root": outcome(lambda: (root / "new.txt").write_text("x")),
    "read_classmate": outcome(lambda: (root / "autograded" / "bob" / "lec01_codesign" / "codesign.py").read_text()),
    "write_classmate": outcome(lambda: (root / "autograded" / "bob" / "lec01_codesign" / "codesign.py").write_text("x")),
    "network": outcome(connect),
    "instructor_env": sorted(k for k in os.environ if k.startswith("CS349E_INSTRUCTOR")),
    "mode": os.environ.get("NBGRADER_EXECUTION"),
    "home": os.environ["HOME"],
}))
'''


@pytest.fixture
def course(tmp_path):
    root = tmp_path / "course"
    for student in ("ann", "bob"):
        folder = root / "autograded" / student / "lec01_codesign"
        folder.mkdir(parents=True)
        (folder / "codesign.py").write_text(f"# {student}\n")
    (root / "secret.txt").write_text("key")
    return root


def run_probe(folder) -> dict:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE)])
    NotebookClient(nb, kernel_name="python3", kernel_manager_class=SandboxedKernelManager, timeout=60,
                   resources={"metadata": {"path": str(folder)}}).execute()
    [output] = nb.cells[0].outputs
    return json.loads(output["text"])


def test_the_kernel_writes_only_its_own_folder_and_has_no_network(course, monkeypatch):
    if launcher.bubblewrap_problem() is not None:
        pytest.skip(f"bubblewrap does not work here: {launcher.bubblewrap_problem()}")
    monkeypatch.delenv("CS349E_ISOLATION", raising=False)
    monkeypatch.setenv("CS349E_INSTRUCTOR_SECRET", "1")
    seen = run_probe(course / "autograded" / "ann" / "lec01_codesign")
    assert seen["cwd"] == str(course / "autograded" / "ann" / "lec01_codesign")
    assert seen["write_own_folder"] == "done"
    assert (course / "autograded" / "ann" / "lec01_codesign" / "mine.txt").read_text() == "x"
    assert seen["read_course_file"] == "FileNotFoundError"
    assert seen["write_course_root"] == "OSError" and not (course / "new.txt").exists()
    assert seen["read_classmate"] == "FileNotFoundError" and seen["write_classmate"] != "done"
    assert (course / "autograded" / "bob" / "lec01_codesign" / "codesign.py").read_text() == "# bob\n"
    assert seen["network"] != "done"
    assert seen["instructor_env"] == [] and seen["mode"] == "autograde"
    assert not seen["cwd"].startswith(seen["home"])  # IPython would print the student's files as "~/…"


def test_without_bubblewrap_autograde_refuses_unless_lowered_explicitly(monkeypatch):
    monkeypatch.setattr(launcher, "bubblewrap_problem", lambda: "bwrap is not installed")
    monkeypatch.delenv("CS349E_ISOLATION", raising=False)
    with pytest.raises(SandboxUnavailable, match="CS349E_ISOLATION=rlimits"):
        kernel_isolation()
    monkeypatch.setattr(launcher, "rlimits_problem", lambda: None)
    monkeypatch.setenv("CS349E_ISOLATION", "rlimits")
    assert kernel_isolation() == "rlimits"
    monkeypatch.setenv("CS349E_ISOLATION", "none")
    with pytest.raises(SandboxUnavailable, match="'bubblewrap' or 'rlimits'"):
        kernel_isolation()
