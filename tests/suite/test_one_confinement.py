"""One confinement value per grader process: is every decision about how student code is
isolated and bounded made by the confinement module's classes, never by comparing the names
results record ("bubblewrap", "rlimits", "cgroup v2", …) somewhere else?"""

import ast
from pathlib import Path

from core.script_output import REPO

CONFINEMENT = REPO / "autograder" / "sandbox" / "confinement.py"
# The names results, logs and the command line use for an isolation or a quota backend.
NAMES = {"bubblewrap", "rlimits", "cgroup v1", "cgroup v2", "cgroup v2 (delegated)"}
# Words that are such a name only where isolation is being talked about.
ISOLATION_WORDS = {"none", "auto", "best"}
# Constants that stood for those names.
NAME_CONSTANTS = {"BEST", "RLIMITS", "BUBBLEWRAP", "AUTO", "NO_QUOTA", "NOT_RUN"}


def _sources() -> list[Path]:
    files = sorted((REPO / "autograder").rglob("*.py")) + sorted((REPO / "benchmarks").glob("*.py"))
    return [f for f in files if f != CONFINEMENT and "__pycache__" not in f.parts]


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            found.add(id(body[0].value))
    return found


def name_uses(path: Path) -> list[str]:
    """Every place in `path` that spells an isolation or quota name, or compares with a constant
    standing for one."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    lines = text.splitlines()
    docstrings = _docstrings(tree)
    where = path.relative_to(REPO) if REPO in path.parents else path.name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            line = lines[node.lineno - 1]
            if node.value in NAMES or (node.value in ISOLATION_WORDS
                                       and any(w in line.lower() for w in ("isolation", "quotas", "隔离"))):
                found.append(f"{where}:{node.lineno}: {line.strip()}")
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(n, ast.Name) and n.id in NAME_CONSTANTS for o in operands for n in ast.walk(o)):
                found.append(f"{where}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return found


def test_no_isolation_or_quota_name_is_compared_outside_the_confinement_module():
    uses = [use for path in _sources() for use in name_uses(path)]
    assert uses == [], f"{len(uses)} name(s) outside autograder/sandbox/confinement.py:\n" + "\n".join(uses)


def test_the_check_sees_a_comparison_by_name(tmp_path):
    """The check itself: a name compared, a dict keyed by names, a constant standing for one."""
    sample = tmp_path / "sample.py"
    sample.write_text('def f(isolation, q):\n    WORDS = {"cgroup v2": 1}\n'
                      '    return isolation == "rlimits" or q != BEST or isolation in ("bubblewrap", "none")\n',
                      encoding="utf-8")
    assert [use.split(":")[1] for use in name_uses(sample)] == ["2", "3", "3", "3", "3"]


def test_isolations_are_ordered_by_strength_and_the_fallback_has_a_network_only_where_probed():
    from autograder.sandbox import confinement, launcher

    strengths = [i.strength for i in confinement.ISOLATIONS]
    assert strengths == sorted(strengths, reverse=True) and len(set(strengths)) == len(strengths)
    assert confinement.CHOICES[0] == confinement.DEFAULT.name
    probed = launcher.network_namespace_problem() is None
    assert [i.own_network for i in confinement.ISOLATIONS] == [True, probed]
    assert [i.sealed_network for i in confinement.ISOLATIONS] == [True, False]   # what a cluster relies on
    assert [i.lowered for i in confinement.ISOLATIONS] == [False, True]


def test_a_recorded_name_comes_back_as_its_class_and_an_unknown_one_says_so():
    from autograder.sandbox import confinement

    for isolation in (*confinement.ISOLATIONS, confinement.NOT_RUN):
        assert confinement.isolation_named(isolation.name) is isolation
    for kind in confinement.QUOTA_KINDS:
        assert type(confinement.quota_named(kind.name)) is kind
    stranger = confinement.isolation_named("docker")
    assert not stranger.known and "docker" in stranger.words and "未知" in stranger.words
    assert "未知" in confinement.quota_named("jail").words
    assert confinement.asked("auto") is confinement.BUBBLEWRAP   # the old name of bubblewrap


def test_a_stored_result_stands_for_a_run_only_if_isolated_as_asked_or_nothing_ran():
    from autograder.sandbox import confinement

    bwrap, fallback, none = confinement.BUBBLEWRAP, confinement.UID_FALLBACK, confinement.NOT_RUN
    assert bwrap.stands_for(bwrap) and fallback.stands_for(fallback)
    assert not fallback.stands_for(bwrap) and not bwrap.stands_for(fallback)
    assert none.stands_for(bwrap) and none.stands_for(fallback)
    assert not confinement.isolation_named("docker").stands_for(bwrap)


def test_a_batch_reports_the_quotas_its_results_record_and_who_was_not_placed():
    """On a cluster the instructor's machine bounds nothing: the report says what the workers
    recorded, whatever this machine would have used."""
    from autograder.engine.batch import _confinement_of
    from autograder.sandbox import Limits

    workers = [("cgroup v2", True), ("cgroup v2", False), ("rlimits", True)]
    quotas, placement = _confinement_of(workers, Limits(), local=False, pending=True)
    assert quotas == "cgroup v2 / rlimits"
    assert placement.startswith("1 of 3 ")
    assert _confinement_of([("cgroup v2", True)], Limits(), local=False, pending=True) == ("cgroup v2", "")
