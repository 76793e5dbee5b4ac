"""No file over MAX_LINES lines in the grader's core (sandbox/ and engine/): a file that long does
several jobs, and each job deserves a module whose name says it (launcher.py became bwrap.py,
uid_fallback.py and worker_plan.py; session.py gave messages.py and resources.py away)."""

from core.script_output import REPO

MAX_LINES = 450
CORE = ("autograder/sandbox", "autograder/engine")
# Known exceptions, each with why it is still long; remove a file from here once it is split.
KNOWN_LONG = {
}


def _lengths() -> dict[str, int]:
    return {str(path.relative_to(REPO)): len(path.read_text(encoding="utf-8").splitlines())
            for folder in CORE for path in sorted((REPO / folder).rglob("*.py"))}


def test_no_core_file_is_over_the_limit():
    assert {name: n for name, n in _lengths().items() if n > MAX_LINES and name not in KNOWN_LONG} == {}

