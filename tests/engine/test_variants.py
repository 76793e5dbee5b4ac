"""Per-student variants (autograder/engine/variants.py): a student's parameters are a pure function
of the assignment's secret seed and the student id, and the keys follow the parameters."""

from __future__ import annotations

import pytest

from autograder.engine.assignment import load_assignment
from autograder.engine.registry import ConfigError
from autograder.engine.variants import (StudentIdError, has_variants, keys_for, normalize_id, params_of,
                                        variant_digest)
from course_copy import run
from variant_course import NAME, evaluate, variant_course

IDS = [f"2026{n:04d}" for n in range(30)]
USE = "from autograder.engine.variants import params_for, keys_for, variant_digest, lecture_params, seed_path"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return variant_course(tmp_path_factory.mktemp("course"))


def test_students_of_one_class_get_different_keys(course):
    """The defect: every student had the same keys, so one student's numbers were everyone's."""
    keys = evaluate(course, f"[keys_for({NAME!r}, sid) for sid in {IDS!r}]", USE)
    assert len({k["q01_intensity"] for k in keys}) >= 3 and {k["q02_bound"] for k in keys} == {"A", "B"}
    pairs = [(a, b) for i, a in enumerate(keys) for b in keys[i + 1:]]
    assert sum(a == b for a, b in pairs) < len(pairs) / 2  # 4 sizes x 5 ridge points: most pairs differ


def test_a_students_keys_are_the_references_keys_for_their_own_parameters(course):
    got = evaluate(course, f"[[params_for({NAME!r}, s), dict(keys_for({NAME!r}, s))] for s in {IDS[:5]!r}]",
                   USE + f"\nfrom solutions.{NAME}.answers import answer_key")
    reference = evaluate(course, f"[answer_key(p) for p in {[p for p, _ in got]!r}]",
                         f"from solutions.{NAME}.answers import answer_key")
    assert [k for _, k in got] == reference


def test_the_variant_is_the_same_in_every_process_and_ignores_surrounding_spaces(course):
    first = evaluate(course, f"[params_for({NAME!r}, s) for s in {IDS[:6]!r}]", USE)
    again = evaluate(course, f"[params_for({NAME!r}, ' ' + s + '\\t') for s in {IDS[:6]!r}]", USE)
    assert first == again


def test_no_student_means_the_lectures_own_example(course):
    lecture, key = evaluate(course, f"[lecture_params({NAME!r}), dict(keys_for({NAME!r}, None))]", USE)
    reference = evaluate(course, "answer_key()", f"from solutions.{NAME}.answers import answer_key")
    assert key == reference
    assert lecture == evaluate(course, "LECTURE", f"from solutions.{NAME}.variants import LECTURE")


def test_the_variant_is_drawn_from_the_secret_seed(course):
    """Another seed, other numbers: the id alone (which a classmate knows) does not give the variant."""
    before = evaluate(course, f"[params_for({NAME!r}, s) for s in {IDS!r}]", USE)
    seed = course / "autograder" / NAME / "variant_seed"
    kept = seed.read_text()
    try:
        seed.write_text("ab" * 32 + "\n")
        after = evaluate(course, f"[params_for({NAME!r}, s) for s in {IDS!r}]", USE)
        seed.unlink()
        missing = run(course, "-c", f"{USE}\nparams_for({NAME!r}, 'alice')")
    finally:
        seed.write_text(kept)
    assert before != after
    assert missing.returncode != 0 and f"autograder/{NAME}/variant_seed is missing" in missing.stderr


def test_build_draws_the_seed_once_and_never_replaces_it(course):
    seed = course / "autograder" / NAME / "variant_seed"
    text = seed.read_text()
    assert len(text.strip()) == 64 and int(text, 16) > 0
    out = run(course, "-m", "autograder", "build", NAME)
    assert out.returncode == 0 and seed.read_text() == text


@pytest.mark.parametrize("bad", ["", "   ", "a\nb", "x\x00", "é" * 201])
def test_an_id_that_cannot_name_a_variant_is_refused(bad):
    with pytest.raises(StudentIdError):
        normalize_id(bad)


def test_normalized_ids_keep_their_case():
    assert normalize_id("  Alice01 ") == "Alice01" != normalize_id("alice01")


def test_the_digest_names_the_parameters_not_their_order():
    assert variant_digest({"n": 1, "ridge": 2.0}) == variant_digest({"ridge": 2.0, "n": 1})
    assert variant_digest({"n": 1, "ridge": 2.0}) != variant_digest({"n": 2, "ridge": 2.0})
    assert len(variant_digest({"n": 1})) == 12


def test_an_assignment_without_variants_grades_everyone_against_its_one_key(monkeypatch):
    """(lec01_codesign declares variants: here its variants.py is taken away, as if never written.)"""
    from autograder.engine import variant_declaration

    monkeypatch.setattr(variant_declaration, "variants_module", lambda name: None)
    load_assignment.cache_clear()
    try:
        assert not has_variants("lec01_codesign") and params_of("lec01_codesign", "alice") is None
        assert keys_for("lec01_codesign", "alice") is load_assignment("lec01_codesign").answer_key
        with pytest.raises(ConfigError, match="has no variants"):
            load_assignment("lec01_codesign").key_for({"n": 1})
    finally:
        load_assignment.cache_clear()  # the next test loads it with its variants again


def test_grade_student_ids_file_is_read_or_refused_by_name(tmp_path):
    from autograder.commands.grade import read_student_ids

    good = tmp_path / "ids.json"
    good.write_text('{"submission": {"id": "2026001", "source": "gradescope sid"}}', encoding="utf-8")
    assert read_student_ids(good) == {"submission": ("2026001", "gradescope sid")}
    assert read_student_ids(None) == {}
    bad = tmp_path / "bad.json"
    for text in ('{"submission": "2026001"}', "[1]", "not json"):
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=r"--student-ids .*bad\.json"):
            read_student_ids(bad)


def test_a_seed_given_in_process_draws_its_own_class_not_the_stored_one(monkeypatch):
    """The variant store names an entry by the student id; a seed other than the seed file's (the
    tests' class seeds, an instructor trying a seed) must not be answered with the stored variant
    of the same id drawn from another seed."""
    from autograder.engine import variants as engine_variants

    drawn = []
    for seed in ("11" * 32, "22" * 32):
        monkeypatch.setattr(engine_variants, "read_seed", lambda name, root=None, s=seed: bytes.fromhex(s))
        drawn.append(engine_variants.params_for("lec01_codesign", "seed-store-probe"))
    assert drawn[0] != drawn[1]
