"""Keys once per variant: does every process read the keys and variants another one computed, from a
store only the grader can read, and does a changed reference or parameter compute them anew?"""

from __future__ import annotations

import json
import os
import stat

import pytest

from variant_course import NAME, evaluate, ok, run, variant_course
from autograder.engine import key_cache

STORE = ".key_cache"
# A process in which nothing can compute a key or draw a variant: whatever it gets comes from the store.
NOTHING_COMPUTED = f"""
import autograder.{NAME} as package, solutions.{NAME}.variants as variants
def refuse(*args, **kwargs):
    raise RuntimeError("computed again")
package.answer_key = refuse
variants.variant = refuse
from autograder.engine.assignment import load_assignment
from autograder.engine.variants import keys_for, params_for
"""


@pytest.fixture()
def course(tmp_path):
    return variant_course(tmp_path / "course")


def keys_in_a_fresh_process(root, student, setup=""):
    return evaluate(root, f"dict(keys_for({NAME!r}, {student!r}))",
                    setup or "from autograder.engine.variants import keys_for")


def test_a_second_process_reads_the_keys_and_the_variant_the_first_computed(course):
    first = keys_in_a_fresh_process(course, "alice")
    lecture = keys_in_a_fresh_process(course, None)
    assert keys_in_a_fresh_process(course, "alice", NOTHING_COMPUTED) == first
    assert keys_in_a_fresh_process(course, None, NOTHING_COMPUTED) == lecture
    done = run(course, "-c", NOTHING_COMPUTED + f"keys_for({NAME!r}, 'bob')")   # never computed: not stored
    assert done.returncode != 0 and "computed again" in done.stderr


def test_the_store_is_private_and_outside_what_students_get(course):
    keys_in_a_fresh_process(course, "alice")
    store = course / STORE
    folders = [store, *(p for p in store.rglob("*") if p.is_dir())]
    files = [p for p in store.rglob("*") if p.is_file()]
    # the lecture's key, alice's key and alice's variant (beside lec01's shared work the copy starts with)
    assert len([p for p in files if p.relative_to(store).parts[0] == NAME]) == 3
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in folders)
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)
    assert not any(STORE in p.parts for p in (course / "assignments").rglob("*"))
    assert not any("alice" in p.name for p in files)   # entries are named by hashes, not by ids


def test_a_store_others_can_read_is_closed_and_a_loose_entry_is_not_trusted(course):
    first = keys_in_a_fresh_process(course, "alice")
    store = course / STORE
    os.chmod(store, 0o755)
    for entry in (p for p in store.rglob("*") if p.is_file()):
        os.chmod(entry, 0o644)
    done = run(course, "-c", NOTHING_COMPUTED + f"keys_for({NAME!r}, 'alice')")
    assert done.returncode != 0 and "computed again" in done.stderr
    assert keys_in_a_fresh_process(course, "alice") == first
    assert stat.S_IMODE(store.stat().st_mode) == 0o700


def test_a_changed_reference_computes_the_keys_again(course):
    before = keys_in_a_fresh_process(course, "alice")
    answers = course / "solutions" / NAME / "answers.py"
    answers.write_text(answers.read_text(encoding="utf-8").replace(
        'return {"q01_intensity": intensity,', 'return {"q01_intensity": 2 * intensity,'), encoding="utf-8")
    after = keys_in_a_fresh_process(course, "alice")
    assert after["q01_intensity"] == 2 * before["q01_intensity"]
    assert len(list((course / STORE / NAME).iterdir())) == 1   # the stale keys are gone


def test_a_changed_seed_draws_the_variants_again(course):
    params = evaluate(course, f"params_for({NAME!r}, 'alice')", "from autograder.engine.variants import params_for")
    seed = course / "autograder" / NAME / "variant_seed"
    seed.write_text("0" * 64 + "\n", encoding="ascii")
    again = run(course, "-c", NOTHING_COMPUTED + f"params_for({NAME!r}, 'alice')")
    assert again.returncode != 0 and "computed again" in again.stderr
    assert isinstance(params, dict)


def test_a_changed_parameter_is_not_served_the_stored_key(course):
    params = evaluate(course, f"params_for({NAME!r}, 'alice')", "from autograder.engine.variants import params_for")
    keys_in_a_fresh_process(course, "alice")
    stored = evaluate(course, f"dict(load_assignment({NAME!r}).key_for({params!r}))", NOTHING_COMPUTED)
    assert stored == keys_in_a_fresh_process(course, "alice")
    changed = {**params, "n": params["n"] * 2}
    done = run(course, "-c", NOTHING_COMPUTED + f"load_assignment({NAME!r}).key_for({changed!r})")
    assert done.returncode != 0 and "computed again" in done.stderr


def test_lec01s_stored_keys_equal_its_computed_keys_checks_included(tmp_path, monkeypatch):
    """Every number and letter comes back equal and of the same kind; the measurement items' checks
    come from key_checks(), not from the store."""
    import autograder.lec01_codesign as package
    from autograder.engine.variants import canonical_json, lecture_params, params_for

    monkeypatch.setattr(key_cache, "store_root", lambda: tmp_path / STORE)
    name = "lec01_codesign"
    variants = [None, canonical_json(lecture_params(name))]
    variants += [canonical_json(params_for(name, sid)) for sid in ("kc-1", "kc-2")]

    def refuse():
        raise AssertionError("computed again")

    for params_json in variants:
        def compute():
            return package.answer_key() if params_json is None else package.answer_key(json.loads(params_json))

        computed = key_cache.cached_key(name, params_json, compute, package.key_checks)
        stored = key_cache.cached_key(name, params_json, refuse, package.key_checks)
        assert sorted(stored) == sorted(computed)
        for item, value in computed.items():
            if isinstance(value, (str, float, int)):
                assert stored[item] == value and isinstance(stored[item], type(value)), item
            else:
                assert type(stored[item]) is type(value), item


def test_without_key_checks_a_key_holding_checks_is_not_stored(tmp_path, monkeypatch):
    import autograder.lec01_codesign as package

    monkeypatch.setattr(key_cache, "store_root", lambda: tmp_path / STORE)
    key_cache.cached_key("lec01_codesign", None, package.answer_key)
    assert not [p for p in (tmp_path / STORE).rglob("*") if p.is_file()]


def test_shared_work_is_stored_once_and_read_back_as_every_process_sees_it(tmp_path, monkeypatch):
    """cached_value: computed once, then read (never computed again); the computing process gets the
    value as JSON gives it back, as every later one does; a value JSON changes is not stored."""
    import numpy as np

    monkeypatch.setattr(key_cache, "store_root", lambda: tmp_path / STORE)
    calls = []

    def compute():
        calls.append(1)
        return {"nvfp4": {"deficit": np.float64(0.1) + np.float64(0.2)}}

    first = key_cache.cached_value("lec01_codesign", "work", compute)
    again = key_cache.cached_value("lec01_codesign", "work", compute)
    assert calls == [1] and first == again == {"nvfp4": {"deficit": 0.1 + 0.2}}
    assert type(first["nvfp4"]["deficit"]) is type(again["nvfp4"]["deficit"]) is float
    assert key_cache.cached_value("lec01_codesign", "tuple", lambda: (1, 2)) == (1, 2)   # JSON gives a list back
    assert key_cache.cached_value("lec01_codesign", "tuple", lambda: (3, 4)) == (3, 4)   # so it was not stored
    monkeypatch.setattr(key_cache, "ENABLED", False)
    assert key_cache.cached_value("lec01_codesign", "work", lambda: {"off": 1.0}) == {"off": 1.0}


def test_lec01s_stored_end_to_end_forward_equals_a_fresh_one(tmp_path, monkeypatch):
    from solutions.lec01_codesign import answers

    monkeypatch.setattr(key_cache, "store_root", lambda: tmp_path / STORE)
    fresh = answers._end_to_end()
    stored = key_cache.cached_value("lec01_codesign", "end_to_end", answers._end_to_end)
    assert key_cache.cached_value("lec01_codesign", "end_to_end", lambda: {}) == stored == fresh
