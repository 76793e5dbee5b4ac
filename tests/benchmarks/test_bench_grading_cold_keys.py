"""bench_grading --against REV --cold-keys: every tree's key store is emptied before each of its
gradings, the revision's as well as this tree's, so that neither side reads back keys the other
computed anew (a revision's store kept between rounds made only this tree pay the keys)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from course_copy import ROOT


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_grading_under_test", ROOT / "benchmarks" / "bench_grading.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cold_keys_grades_every_tree_with_an_empty_key_store(tmp_path, monkeypatch):
    bench = load_bench()
    this_tree = tmp_path / "this"
    this_tree.mkdir()
    monkeypatch.setattr(bench, "ROOT", this_tree)
    store_at_grading = []

    def fake_worktree(rev, dest):
        dest.mkdir(parents=True)
        return dest

    def fake_grading(tree, submissions, out, jobs):
        store = Path(tree) / bench.KEY_STORE
        store_at_grading.append((Path(tree).name, store.exists()))
        (store / "lec01_codesign").mkdir(parents=True, exist_ok=True)   # a grading stores its keys
        out.mkdir(parents=True, exist_ok=True)
        return 1.0, 1.0, "a fake"

    monkeypatch.setattr(bench, "git_worktree", fake_worktree)
    monkeypatch.setattr(bench, "distinct_class", lambda tree, dest, size: dest)
    monkeypatch.setattr(bench, "graded_class", fake_grading)
    monkeypatch.setattr(bench, "full_marks", lambda out: "")
    monkeypatch.setattr(bench, "busy_cores", lambda seconds=1.0: 0.0)
    monkeypatch.setattr(bench.subprocess, "run", lambda *a, **k: None)   # no worktree to remove
    assert bench.against(["REV"], students=1, jobs_list=[1], rounds=2, cold_keys=True) == 0
    assert len(store_at_grading) == 4
    assert not [tree for tree, stored in store_at_grading if stored], store_at_grading


def test_new_ids_hands_in_the_class_under_ids_no_earlier_grading_used(tmp_path, monkeypatch):
    """--new-ids: the lecture's key is stored in every tree before the rounds, and each grading's
    students are new (their variants' keys not stored yet): a new class of an assignment in use."""
    bench = load_bench()
    this_tree = tmp_path / "this"
    this_tree.mkdir()
    monkeypatch.setattr(bench, "ROOT", this_tree)
    graded, prepared = [], []

    def fake_worktree(rev, dest):
        dest.mkdir(parents=True)
        return dest

    def fake_class(tree, dest, size):
        for i in range(size):
            (dest / f"student{i:03d}").mkdir(parents=True)
        return dest

    def fake_grading(tree, submissions, out, jobs):
        graded.append((Path(tree).name, jobs, sorted(p.name for p in Path(submissions).iterdir())))
        out.mkdir(parents=True, exist_ok=True)
        return 1.0, 1.0, "a fake"

    monkeypatch.setattr(bench, "git_worktree", fake_worktree)
    monkeypatch.setattr(bench, "distinct_class", fake_class)
    monkeypatch.setattr(bench, "graded_class", fake_grading)
    monkeypatch.setattr(bench, "store_lecture_key", lambda tree: prepared.append(Path(tree).name))
    monkeypatch.setattr(bench, "full_marks", lambda out: "")
    monkeypatch.setattr(bench, "busy_cores", lambda seconds=1.0: 0.0)
    monkeypatch.setattr(bench.subprocess, "run", lambda *a, **k: None)
    assert bench.against(["REV"], students=2, jobs_list=[1, 2], rounds=2, new_ids=True) == 0
    assert sorted(prepared) == ["rev0", "this"]
    assert len(graded) == 8
    for tree in ("this", "rev0"):
        ids = [sid for name, _, students in graded if name == tree for sid in students]
        assert len(ids) == 8 and len(set(ids)) == 8, ids   # nobody graded twice in a tree
    # the trees grade the same ids in a round, so neither is handed easier students
    assert sorted(s for n, _, s in graded if n == "this") == sorted(s for n, _, s in graded if n == "rev0")
