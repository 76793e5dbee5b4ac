"""The course as it runs on a JupyterHub, in a real browser (docs/jupyterhub.md): a hub on
127.0.0.1 set up by deploy/jupyterhub/setup_hub.py, system users logged in with PAM, each user's
JupyterLab running as that user, the course's formgrader as a hub service of its grader user.

The hub is set up, started and lecture 1 released with docs/jupyterhub.md's commands as written.
Students fetch lecture 1 in JupyterLab's Assignments panel, leave STUDENT_ID empty, type one
function and one report answer, upload the rest, validate and submit (alice twice, after a submit
without the notebook is refused; bob after the due date). formgrader lists them by their names. The instructor collects and clicks "autograde" in formgrader (which pregrades first);
the TA scores q20 in manual grading; feedback is generated and released from formgrader and the
students fetch it. `nbgrader export` must equal the trusted grader's automatic points plus the
TA's points, with the late penalty on bob. Screenshots of every step: artifacts/hub/.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import nbformat
import pytest

import hub_clicks as B
from autograder.engine.lateness import load_policy, penalty_points, submission_time
from autograder.engine.outputs import read_result, results_path
from autograder.engine.registry import load_config
from autograder.engine.vocabulary import AUTOMATIC_KINDS
from hub_machine import ASSIGNMENT, DOCUMENTED_ENV, KIT, NAMES

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

COURSE = "cs349e"
CONFIG = load_config(ASSIGNMENT)
AUTO_ITEMS = [item.id for item in CONFIG.items_of(*AUTOMATIC_KINDS)]
TA_ITEM = "q20_explain_scaling"
TA_POINTS = 3.0
TYPED_FUNCTION = "flops_per_exp"
TYPED_ANSWER = "q02_format_gain"
ARTIFACTS = KIT / "artifacts" / "hub"
STUB_LINE = re.compile(rf'^(\s*)raise NotImplementedError\("{TYPED_FUNCTION} .*$', re.M)


# ---------------------------------------------------------------------------------------------
# what the students hand in: the trusted reference, minus what they type in the browser
# ---------------------------------------------------------------------------------------------
def _function_body(source: str, name: str) -> str:
    """The statements after `name`'s docstring, up to the next top-level definition."""
    start = source.index(f"\ndef {name}(")
    doc_end = source.index('"""', source.index('"""', start) + 3) + 3
    end = source.index("\n\n\ndef ", doc_end)
    return source[doc_end:end].strip("\n")


def answers(scratch: Path) -> dict:
    reference = scratch / "reference"
    subprocess.run([str(KIT / ".venv" / "bin" / "python"), "-m", "autograder", "reference", ASSIGNMENT, str(reference)],
                   cwd=KIT, check=True, capture_output=True, timeout=300)
    release = KIT / "assignments" / ASSIGNMENT
    solved = (reference / "codesign.py").read_text(encoding="utf-8")
    body = _function_body(solved, TYPED_FUNCTION)
    stub = STUB_LINE.search((release / "codesign.py").read_text(encoding="utf-8")).group(0)
    upload = scratch / "upload"
    upload.mkdir()
    (upload / "codesign.py").write_text(solved.replace(body, stub), encoding="utf-8")
    nb = nbformat.read(reference / "handout.ipynb", as_version=4)
    released = {c.id: c for c in nbformat.read(release / "handout.ipynb", as_version=4).cells}
    answer_cell = next(c for c in nb.cells if c.id == f"{TYPED_ANSWER}_answer")
    typed_answer = answer_cell.source
    answer_cell.source = released[answer_cell.id].source
    student_id = next(c for c in nb.cells if c.id == "student_id")
    assert 'STUDENT_ID = ""' in student_id.source  # left empty: the login name is used
    nbformat.write(nb, upload / "handout.ipynb")
    return {"files": [upload / "codesign.py", upload / "handout.ipynb"], "function": body.strip(),
            "answer": typed_answer, "stub": stub.strip()}


# ---------------------------------------------------------------------------------------------
# the student's side
# ---------------------------------------------------------------------------------------------
def type_function(page, user, url, body: str, stub: str) -> None:
    B.open_file(page, user, url, f"{COURSE}/{ASSIGNMENT}/codesign.py")
    editor = page.locator(".jp-FileEditor:visible .cm-content")
    editor.click()
    # The editor draws only the lines in view: scroll down (the mouse wheel) to the stub.
    line = page.locator(".jp-FileEditor:visible .cm-line", has_text=stub[:40])
    for _ in range(200):
        if line.count():
            break
        page.mouse.wheel(0, 600)
        page.wait_for_timeout(100)
    line.click()
    page.keyboard.press("End")
    page.keyboard.press("Shift+Home")  # the statement, after its indentation
    page.keyboard.insert_text(body.lstrip())
    B.save(page)


def type_answer(page, user, url, answer: str) -> None:
    B.open_file(page, user, url, f"{COURSE}/{ASSIGNMENT}/handout.ipynb")
    page.wait_for_selector(".jp-NotebookPanel:visible .jp-Cell")
    prompt = page.locator(".jp-NotebookPanel:visible .jp-MarkdownCell", has=page.locator(f"h3:has-text('{TYPED_ANSWER}：')"))
    cell = prompt.locator("xpath=following-sibling::div[contains(@class,'jp-CodeCell')][1]")
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(answer)
    page.keyboard.press("Escape")
    B.save(page)


def fetch(page, shots, user):
    panel = B.open_assignments(page)
    panel.locator(f"#released_assignments_list .list_item:has-text('{ASSIGNMENT}') button:has-text('Fetch')").click()
    panel.locator("#fetched_assignments_list .list_item").first.wait_for()
    shots(page, f"{user} fetched {ASSIGNMENT}")
    return panel


def validate(page, shots, user) -> str:
    panel = B.open_assignments(page)
    panel.locator("#fetched_assignments_list a.assignment-notebooks-link").click()
    panel.locator("#fetched_assignments_list button:has-text('Validate')").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=B.SLOW * 2)
    text = dialog.inner_text()
    shots(page, f"{user} validated")
    dialog.locator("button").last.click()
    return text


def submit_refused(page, shots, user) -> str:
    """Submit, which nbgrader refuses: the text of the dialog that says why."""
    panel = B.open_assignments(page)
    panel.locator(f"#fetched_assignments_list .list_item:has-text('{ASSIGNMENT}') button:has-text('Submit')").first.click()
    dialog = page.locator(".jp-Dialog:has-text('not submitted')")
    dialog.wait_for()
    text = dialog.inner_text()
    shots(page, f"{user} refused submit without the notebook")
    dialog.locator("button").last.click()
    dialog.wait_for(state="detached")
    return text


def submit(page, shots, user, n: int) -> None:
    panel = B.open_assignments(page)
    panel.locator(f"#fetched_assignments_list .list_item:has-text('{ASSIGNMENT}') button:has-text('Submit')").first.click()
    panel.locator("#submitted_assignments_list .list_item").nth(0).wait_for()
    inbound = Path("/srv/cs349e-hub-test/exchange") / COURSE / "inbound"
    for _ in range(600):  # every submission is kept in the exchange, none replaces another
        if len(list(inbound.glob(f"{user}+{ASSIGNMENT}+*"))) >= n:
            break
        time.sleep(0.1)
    assert len(list(inbound.glob(f"{user}+{ASSIGNMENT}+*"))) == n
    shots(page, f"{user} submitted ({n})")


# ---------------------------------------------------------------------------------------------
# the instructor's and the TA's side: formgrader, a hub service
# ---------------------------------------------------------------------------------------------
def formgrader(url: str, path: str = "") -> str:
    return f"{url}/services/{COURSE}/formgrader{path}"


def close_modal(page, shots, what) -> str:
    modal = page.locator(".modal.in, .modal.show").last
    modal.wait_for(timeout=B.SLOW * 3)
    text = modal.inner_text()
    shots(page, what)
    modal.locator("button:has-text('Close'), button:has-text('OK')").first.click()
    modal.wait_for(state="hidden")
    return text


def api(page, url: str):
    page.goto(url)
    return json.loads(page.inner_text("body"))


def test_a_course_on_the_hub_in_a_browser(hub, tmp_path):
    from playwright.sync_api import sync_playwright

    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    shots = B.Shots(ARTIFACTS)
    typed = answers(tmp_path)
    for f in typed["files"]:
        f.chmod(0o644)
    staged = Path("/srv/cs349e-hub-test/upload")  # readable by the browser, which runs as root anyway
    staged.mkdir(exist_ok=True)
    files = [shutil.copy(f, staged / f.name) for f in typed["files"]]
    files = [Path(f) for f in files]

    # The instructor releases lecture 1: docs/jupyterhub.md's "Release", as written.
    hub.run_doc_step("Release", DOCUMENTED_ENV)
    assert (hub.hub.exchange / COURSE / "outbound" / ASSIGNMENT / "handout.ipynb").is_file()

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=B.CHROMIUM, args=list(B.CHROMIUM_FLAGS))
        try:
            pages = {}
            for user in ("alice", "bob"):
                page = pages[user] = B.login(chromium, hub.url, user, hub.passwords[user])
                B.wait_for_lab(page)
                shots(page, f"{user} logged in")
                fetch(page, shots, user)
                B.upload(page, user, hub.url, f"{COURSE}/{ASSIGNMENT}", files)
                type_function(page, user, hub.url, typed["function"], typed["stub"])
                shots(page, f"{user} typed {TYPED_FUNCTION}")
                type_answer(page, user, hub.url, typed["answer"])
                shots(page, f"{user} typed {TYPED_ANSWER}")
            home = Path("/home/alice") / COURSE / ASSIGNMENT
            assert typed["function"] in (home / "codesign.py").read_text(encoding="utf-8")
            assert typed["answer"] in nbformat.read(home / "handout.ipynb", as_version=4).cells[
                [c.id for c in nbformat.read(home / "handout.ipynb", as_version=4).cells].index(f"{TYPED_ANSWER}_answer")].source

            verdict = validate(pages["alice"], shots, "alice")
            assert "Success" in verdict or "passed" in verdict.lower(), verdict
            # Submitting without the notebook (renamed, as JupyterLab's file browser does) is refused,
            # naming it; nothing reaches the exchange and the files stay.
            renamed = home / "handout-Copy1.ipynb"
            (home / "handout.ipynb").rename(renamed)
            refused = submit_refused(pages["alice"], shots, "alice")
            assert "not submitted" in refused and "handout.ipynb: MISSING" in refused, refused
            assert not list((hub.hub.exchange / COURSE / "inbound").glob(f"alice+{ASSIGNMENT}+*"))
            renamed.rename(home / "handout.ipynb")
            submit(pages["alice"], shots, "alice", 1)
            time.sleep(1.1)  # nbgrader's submissions are told apart by their second
            submit(pages["alice"], shots, "alice", 2)
            # The due date passes (the instructor moves it to now), then bob submits.
            due = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=2)
            hub.as_grader(COURSE, "nbgrader", "db", "assignment", "add", ASSIGNMENT, f"--duedate={due.isoformat()}")
            while datetime.now(timezone.utc) < due + timedelta(seconds=1):
                time.sleep(0.2)
            submit(pages["bob"], shots, "bob", 1)

            # The instructor: collect and autograde in formgrader.
            teacher = B.login(chromium, hub.url, "instructor", hub.passwords["instructor"], landing=None)
            teacher.goto(formgrader(hub.url))
            teacher.wait_for_selector(f"tr:has-text('{ASSIGNMENT}') td.collect a")
            shots(teacher, "formgrader assignments")
            teacher.click(f"tr:has-text('{ASSIGNMENT}') td.collect a")
            collected = close_modal(teacher, shots, "formgrader collected")
            assert "Successfully collected" in collected, collected
            teacher.goto(formgrader(hub.url, f"/manage_submissions/{ASSIGNMENT}"))
            for user in ("alice", "bob"):
                teacher.click(f"tr:has-text('{user}') td.autograde a")
                graded = close_modal(teacher, shots, f"formgrader autograded {user}")
                assert "Successfully autograded" in graded, graded
            teacher.goto(formgrader(hub.url, f"/manage_submissions/{ASSIGNMENT}"))
            teacher.wait_for_selector("tr:has-text('bob') td.autograde")
            shots(teacher, "formgrader submissions autograded")
            # Each student by the name on the course's roster (courses.toml), not "None, None".
            table = teacher.inner_text("table")
            for user in ("alice", "bob"):
                first, last = NAMES[user]
                assert f"{last}, {first}" in teacher.inner_text(f"tr:has-text('{user}')"), (user, table)
            assert "None" not in table and "null" not in table, table

            # The TA grades q20 by hand: the rubric above the answer; too many points are not kept.
            ta_scores = ta_grades(chromium, hub, shots)

            # Feedback generated and released from formgrader; each student fetches theirs.
            teacher.goto(formgrader(hub.url))
            teacher.click(f"tr:has-text('{ASSIGNMENT}') td.generate-feedback a")
            assert "Successfully generated feedback" in close_modal(teacher, shots, "formgrader generated feedback")
            # Feedback goes out once late work earns nothing (test_feedback_release_gate.py): the late
            # window is closed by moving the due date back past it, and the class's due date restored after.
            closed = due - timedelta(days=load_policy(CONFIG).accept_days + 1)
            hub.as_grader(COURSE, "nbgrader", "db", "assignment", "add", ASSIGNMENT, f"--duedate={closed.isoformat()}")
            teacher.click(f"tr:has-text('{ASSIGNMENT}') td.release-feedback a")
            assert "Successfully released feedback" in close_modal(teacher, shots, "formgrader released feedback")
            hub.as_grader(COURSE, "nbgrader", "db", "assignment", "add", ASSIGNMENT, f"--duedate={due.isoformat()}")
            for user in ("alice", "bob"):
                check_feedback(pages[user], hub, shots, user, ta_scores[user])
            outsiders(chromium, hub, shots, pages["alice"])
            # A submission after the feedback was released: taken like any other, the feedback
            # already fetched stays, and the grades stay those of the collected submission.
            pages["alice"].goto(f"{hub.url}/user/alice/lab")
            B.wait_for_lab(pages["alice"])
            submit(pages["alice"], shots, "alice", 3)
            assert list((Path("/home/alice") / COURSE / ASSIGNMENT / "feedback").glob("*/handout.html"))
        finally:
            chromium.close()

    # The gradebook formgrader wrote: export = trusted automatic points + the TA's, late penalty on bob.
    exported = export(hub)
    course = hub.course(COURSE).root
    due = datetime.fromisoformat(hub.as_grader(COURSE, "python", "-c",
                                               "from autograder.nbgrader_bridge.gradebook import course_due_date as d; "
                                               f"from pathlib import Path; print(d(Path('.'), '{ASSIGNMENT}').isoformat())").stdout.strip())
    policy = load_policy(CONFIG)
    for user in ("alice", "bob"):
        trusted = read_result(results_path(course / ".pinned_results" / ASSIGNMENT, user))
        auto = sum(trusted.item(item).score for item in AUTO_ITEMS)
        seconds_late = (submission_time(course / "submitted" / user / ASSIGNMENT) - due).total_seconds()
        penalty = penalty_points(auto, seconds_late, policy)
        row = exported[user]
        assert float(row["raw_score"]) == pytest.approx(auto + ta_scores[user], abs=0.01), (user, row)
        assert float(row["late_submission_penalty"]) == pytest.approx(penalty, abs=0.01), (user, row)
        assert float(row["score"]) == pytest.approx(auto + ta_scores[user] - penalty, abs=0.01), (user, row)
        assert (penalty > 0) == (user == "bob"), (user, penalty, seconds_late)
    reconcile = hub.as_grader(COURSE, "python", "-m", "autograder", "reconcile", ASSIGNMENT, check=False)
    assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr


def ta_grades(chromium, hub, shots) -> dict[str, float]:
    ta = B.login(chromium, hub.url, "ta", hub.passwords["ta"], landing=None)
    submissions = api(ta, formgrader(hub.url, f"/api/submitted_notebooks/{ASSIGNMENT}/handout"))
    ids = {s["student"]: s["id"] for s in submissions}
    points = next(item.points for item in CONFIG.items if item.id == TA_ITEM)
    given = {"alice": TA_POINTS, "bob": points}
    probe = ta.context.new_page()
    # A handed-in file formgrader serves (an image a notebook links to, or a student's page) is
    # sandboxed in the hub's service too: its server reads the course's nbgrader_config.py.
    served = ta.request.get(formgrader(hub.url, f"/submissions/{ids['alice']}/codesign.py"))
    assert served.ok, served.status
    policy = served.headers.get("content-security-policy", "")
    assert "sandbox" in [d.strip() for d in policy.split(";")], policy

    def stored(user):
        grades = api(probe, formgrader(hub.url, f"/api/grades?submission_id={ids[user]}"))
        return next(g for g in grades if g["name"] == TA_ITEM)

    for user, score in given.items():
        ta.goto(formgrader(hub.url, f"/submissions/{ids[user]}/"))
        box = ta.locator(f"input.score#{TA_ITEM}")
        box.wait_for()
        ta.wait_for_load_state("networkidle")
        page_text = ta.inner_text("body")
        assert "评分标准" in page_text and f"（共 {points:g} 分）" in page_text  # the rubric above the answer
        box.fill(f"{points + 2:g}")  # more than the item has
        box.press("Tab")
        ta.wait_for_load_state("networkidle")
        ta.wait_for_timeout(1000)
        shots(ta, f"ta typed too many points for {user}")
        too_many = stored(user)
        assert too_many["manual_score"] is None or too_many["manual_score"] <= points, too_many
        box.fill(f"{score:g}")
        box.press("Tab")
        ta.wait_for_load_state("networkidle")
        for _ in range(100):
            if stored(user)["manual_score"] == score:
                break
            ta.wait_for_timeout(300)
        assert stored(user)["manual_score"] == score
        shots(ta, f"ta graded {TA_ITEM} of {user}")
    ta.context.close()
    return given


def check_feedback(page, hub, shots, user, ta_score: float) -> None:
    panel = B.open_assignments(page)
    B.refresh_assignments(page)
    panel.locator("#submitted_assignments_list button:has-text('Fetch Feedback')").first.click()
    panel.locator("#submitted_assignments_list a:has-text('view feedback'), #submitted_assignments_list a:has-text('View Feedback')").first.wait_for()
    shots(page, f"{user} fetched feedback")
    folders = sorted((Path("/home") / user / COURSE / ASSIGNMENT / "feedback").iterdir())
    html = folders[-1] / "handout.html"
    page.goto(f"{hub.url}/user/{user}/files/{COURSE}/{ASSIGNMENT}/feedback/{folders[-1].name}/handout.html")
    text = page.inner_text("body")
    shots(page, f"{user} reads feedback")
    assert html.is_file()
    for item in (TYPED_FUNCTION, TYPED_ANSWER, TA_ITEM):
        assert item in text, (user, item)
    # The kit's page (as `nbgrader generate_feedback` writes it), not nbgrader's English one.
    assert '<html lang="zh-CN">' in html.read_text(encoding="utf-8"), user
    assert "Score:" not in text and "Test cell" not in text, user
    points = next(item.points for item in CONFIG.items if item.id == TA_ITEM)
    assert f"得分：{ta_score:.1f} / {points:.1f}" in text, user  # the TA's points reached the student


def outsiders(chromium, hub, shots, student_page) -> None:
    """A student never opens formgrader; a student of the other course sees neither this course's
    assignment nor its formgrader; a student who never fetched has nothing to submit."""
    denied = student_page.context.new_page().goto(formgrader(hub.url))
    assert denied.status == 403, denied.status
    shots(student_page.context.pages[-1], "alice refused formgrader")
    carol = B.login(chromium, hub.url, "carol", hub.passwords["carol"])
    B.wait_for_lab(carol)
    panel = B.open_assignments(carol)
    shots(carol, "carol of cs349f sees no cs349e")
    assert ASSIGNMENT not in panel.locator("#released_assignments_list").inner_text()
    assert carol.goto(formgrader(hub.url)).status == 403
    assert not (Path("/home/carol") / COURSE).exists()
    dave = B.login(chromium, hub.url, "dave", hub.passwords["dave"])
    B.wait_for_lab(dave)
    panel = B.open_assignments(dave)
    panel.locator(f"#released_assignments_list .list_item:has-text('{ASSIGNMENT}') button:has-text('Fetch')").wait_for()
    assert panel.locator("#fetched_assignments_list_placeholder").is_visible()  # "no downloaded assignments"
    assert panel.locator("button:has-text('Submit')").count() == 0
    shots(dave, "dave never fetched")


def export(hub) -> dict[str, dict]:
    hub.as_grader(COURSE, "nbgrader", "export", "--to", "grades.csv")
    with open(hub.course(COURSE).root / "grades.csv", newline="", encoding="utf-8") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}
