"""The assignments of this repository, found by their grading.toml: every per-assignment test
(drift, leak, reference, corpus, nbgrader, `check`) is parametrized over them, so adding an
assignment adds its tests without editing a test module."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def assignments() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "assignments").glob("*/grading.toml"))


def assignments_with_corpus() -> list[str]:
    """Assignments with a corpus of honest, buggy and hostile submissions in tests/corpus/<name>/."""
    return [name for name in assignments() if (ROOT / "tests" / "corpus" / name).is_dir()]
