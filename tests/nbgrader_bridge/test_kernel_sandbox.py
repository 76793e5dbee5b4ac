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
    "venv_writable": outcome(lambda: (root / ".venv" / "planted.txt").write_text("x")),
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


# The README's layout: the virtualenv in .venv/ inside the course (here a link to the one running
# the tests, as a checkout can have it). nbgrader runs from that venv, so the kernel's interpreter
# is <course>/.venv/bin/python, below the folder the sandbox hides.
VENV_PROBE = r'''
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from test_kernel_sandbox import run_probe
print(json.dumps(run_probe(Path(sys.argv[2]))))
'''


def test_the_kernel_starts_from_a_virtualenv_inside_the_course_which_stays_hidden(course, monkeypatch):
    import os
    import subprocess
    import sys
    from pathlib import Path

    if launcher.bubblewrap_problem() is not None:
        pytest.skip(f"bubblewrap does not work here: {launcher.bubblewrap_problem()}")
    (course / ".venv").symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    folder = course / "autograded" / "ann" / "lec01_codesign"
    env = {k: v for k, v in os.environ.items() if k not in ("CS349E_ISOLATION", "PYTHONPATH")}
    root = Path(__file__).resolve().parents[2]
    env["PYTHONPATH"] = str(root)
    done = subprocess.run([str(course / ".venv" / "bin" / "python"), "-c", VENV_PROBE, str(Path(__file__).parent),
                           str(folder)], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["cwd"] == str(folder) and seen["write_own_folder"] == "done"
    assert seen["read_course_file"] == "FileNotFoundError"
    assert seen["write_course_root"] == "OSError" and not (course / "new.txt").exists()
    assert seen["read_classmate"] == "FileNotFoundError"
    assert seen["venv_writable"] != "done"
