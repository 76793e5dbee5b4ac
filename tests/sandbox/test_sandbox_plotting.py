"""The shared matplotlib font cache and the warm notebook child (autograder/sandbox/plotting.py,
warm_notebook.py), with workers forked from the fork server or started the usual way: faster
notebooks, with nothing shared that a submission could change."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest
from sandbox_helpers import FAST, needs_rlimits, notebook_json

from autograder.sandbox import forkserver_client, plotting

CODESIGN = {"codesign.py": "calls = 0\n\ndef bump():\n    global calls\n    calls += 1\n    return calls\n"}
PROBE = (
    "import os, sys\n"
    "preloaded = 'matplotlib.pyplot' in sys.modules\n"
    "import matplotlib\n"
    "cachedir = matplotlib.get_cachedir()\n"
    "fontlists = sorted(f for f in os.listdir(cachedir) if f.startswith('fontlist'))",
    "try:\n"
    "    open(os.path.join(cachedir, fontlists[0]), 'w').write('{}')\n"
    "    overwrote = True\n"
    "except OSError:\n"
    "    overwrote = False",
    "import codesign\ncalls_seen = codesign.calls",
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2], [3, 4])\nfig.savefig('plot.png')\n"
    "drew = os.path.getsize('plot.png') > 0",
)
# Importing pyplot without the shared cache takes seconds on a loaded machine: no cell timeouts here.
SLOW_OK = replace(FAST, cell_timeout=60.0, notebook_timeout=120.0)
VARIABLES = ["preloaded", "cachedir", "fontlists", "overwrote", "calls_seen", "drew"]


@pytest.fixture
def enabled():
    saved = plotting.ENABLED, forkserver_client.ENABLED
    yield
    plotting.ENABLED, forkserver_client.ENABLED = saved


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("isolation", ["bubblewrap", pytest.param("rlimits", marks=needs_rlimits)])
def test_the_notebook_reads_the_shared_font_list_and_cannot_change_it(sandbox, enabled, worker_start, isolation):
    """Does the sandbox's matplotlib find the grader's font list (no rebuild), and does a
    submission that overwrites it leave the shared file (the next student's) unchanged?"""
    if isolation == "rlimits" and worker_start == "forked":
        pytest.skip("only bubblewrap's workers are forked from the fork server")
    plotting.ENABLED = True
    shared = plotting.font_cache()
    assert shared is not None and shared.name.startswith("fontlist-v")
    before = _digest(shared)
    box = sandbox(dict(CODESIGN, **{"handout.ipynb": notebook_json(*PROBE)}), isolation=isolation, limits=SLOW_OK)
    assert box._resources.worker.forked is (worker_start == "forked")
    outcome = box.run_notebook("handout.ipynb", VARIABLES)
    assert outcome.cell_errors == (), outcome.cell_errors
    assert outcome.variables["fontlists"] == [shared.name]
    assert outcome.variables["drew"] is True
    if isolation == "bubblewrap":
        assert outcome.variables["overwrote"] is False   # read-only bind
    assert _digest(shared) == before
    assert "font cache" not in outcome.output.lower()   # matplotlib did not rebuild it


def test_pyplot_is_imported_ahead_in_a_child_without_student_state(sandbox, enabled, worker_start):
    """The notebook child is forked before the student's module is imported: pyplot is already
    there, and nothing the function tests did to the module is."""
    plotting.ENABLED = True
    box = sandbox(dict(CODESIGN, **{"handout.ipynb": notebook_json(*PROBE)}), limits=SLOW_OK)
    assert box._resources.worker.forked is (worker_start == "forked")
    assert box.call("codesign", "bump").value == 1
    assert box.call("codesign", "bump").value == 2
    outcome = box.run_notebook("handout.ipynb", VARIABLES)
    assert outcome.variables["preloaded"] is True
    assert outcome.variables["calls_seen"] == 0
    # A second run (no warm child left) forks as before and still works.
    again = box.run_notebook("handout.ipynb", VARIABLES)
    assert again.cell_errors == () and again.variables["drew"] is True


def test_switched_off_the_sandbox_behaves_as_before(sandbox, enabled):
    plotting.ENABLED = forkserver_client.ENABLED = False
    box = sandbox(dict(CODESIGN, **{"handout.ipynb": notebook_json(*PROBE)}), limits=SLOW_OK)
    outcome = box.run_notebook("handout.ipynb", VARIABLES)
    assert outcome.variables["preloaded"] is False
    assert outcome.variables["fontlists"] == []     # nothing shared: built by its own pyplot import
    assert outcome.variables["drew"] is True


def test_a_worker_without_a_notebook_request_leaves_no_child_behind(sandbox, enabled):
    """The warm child exits with the worker (its request pipe closes)."""
    import os
    import time
    plotting.ENABLED = True
    box = sandbox(dict(CODESIGN, **{"handout.ipynb": notebook_json("x = 1")}))
    assert box.call("codesign", "bump").value == 1
    uid = box.host_uid
    box.close()
    if uid is None:
        pytest.skip("the worker keeps the grader's uid here: its processes cannot be told apart")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == uid]
        if not left:
            break
        time.sleep(0.1)
    assert not left


def _uid_of(pid: str) -> int | None:
    import os
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
