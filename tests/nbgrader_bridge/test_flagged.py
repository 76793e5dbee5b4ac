"""The instructor's lists of what collection refused: written by collect, read back by reconcile."""

from autograder.nbgrader_bridge.flagged import collect_csv, flagged_lines, write_collect_flags, zip_collect_csv
from autograder.nbgrader_bridge.inbound import FILE_LEFT_OUT, NOT_COLLECTED, Flag

ASSIGNMENT = "lec01_codesign"
REFUSED = Flag("ann", "ann+lec01_codesign+2030-01-01 00:00:00.000000 UTC+x", "", NOT_COLLECTED, "owned by ben")
LINK = Flag("cy", "cy+lec01_codesign+2030-01-01 00:00:00.000000 UTC+y", "codesign.py", FILE_LEFT_OUT, "a link")


def test_every_row_of_both_lists_is_a_line(tmp_path):
    write_collect_flags(collect_csv(tmp_path, ASSIGNMENT), [REFUSED, LINK])
    lms = zip_collect_csv(tmp_path, ASSIGNMENT)
    lms.parent.mkdir(parents=True)
    lms.write_text("student,lms_file,reason\n,._amy_1_1_lec01.zip,a hidden file\n", encoding="utf-8")
    lines = flagged_lines(tmp_path, ASSIGNMENT)
    assert lines[0].startswith(f"ann: exchange {REFUSED.inbound}: not collected: owned by ben")
    assert lines[1].startswith(f"cy: exchange {LINK.inbound}/codesign.py: file left out: a link")
    assert lines[2].startswith("(no student): LMS file ._amy_1_1_lec01.zip: not collected: a hidden file")


def test_no_lists_no_lines(tmp_path):
    assert flagged_lines(tmp_path, ASSIGNMENT) == []


def test_a_later_collect_keeps_the_rows_of_students_it_left_alone_once(tmp_path):
    path = collect_csv(tmp_path, ASSIGNMENT)
    write_collect_flags(path, [REFUSED, LINK])
    write_collect_flags(path, [REFUSED], keep=lambda row: row["student"] != "ann")
    assert [line.split(":")[0] for line in flagged_lines(tmp_path, ASSIGNMENT)] == ["cy", "ann"]


# A folder name is any bytes but '/': a spreadsheet formula, or terminal control sequences (OSC 52
# writes the instructor's clipboard, a newline forges a line of the list).
FORMULA = '=HYPERLINK(CONCATENATE("http:",CHAR(47),CHAR(47),"evil.example"),"ok")'
ESCAPES = "x\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J\nben: exchange ok"


def test_a_folder_name_is_no_formula_in_the_list(tmp_path):
    import csv
    flag = Flag(FORMULA, f"{FORMULA}+{ASSIGNMENT}+2030+x", "", NOT_COLLECTED, "no account")
    write_collect_flags(collect_csv(tmp_path, ASSIGNMENT), [flag])
    with open(collect_csv(tmp_path, ASSIGNMENT), encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row), rows


def test_control_characters_in_a_name_reach_no_terminal(tmp_path):
    flag = Flag(ESCAPES, f"{ESCAPES}+{ASSIGNMENT}+2030+x", "", NOT_COLLECTED, "no account")
    write_collect_flags(collect_csv(tmp_path, ASSIGNMENT), [flag])
    lms = zip_collect_csv(tmp_path, ASSIGNMENT)
    lms.parent.mkdir(parents=True)
    import csv
    with open(lms, "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([["student", "lms_file", "reason"], ["", f"{ESCAPES}.zip", "bad"]])
    lines = flagged_lines(tmp_path, ASSIGNMENT)
    assert len(lines) == 2
    assert not any(ch in line for line in lines for ch in "\x1b\x07\n\r"), lines
