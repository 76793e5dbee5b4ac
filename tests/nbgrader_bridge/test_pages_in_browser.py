"""Does anything a student wrote run in the pages nbgrader renders from their notebook (the
feedback HTML a student and the TA open, formgrader's view in the instructor's Jupyter session)?
Rendered with nbgrader 0.9.6's own exporters and the course's nbgrader_config.py, opened in
headless Chromium."""

from __future__ import annotations

import copy
import subprocess
import sys

from pathlib import Path

import nbformat
import pytest
from browser import CHROMIUM, FLAGS, PAYLOAD, assert_inert, dump_dom
from process_state import process_state_restored
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from autograder.engine.assignment import load_assignment
from autograder.engine.report_items import grade_report
from autograder.nbgrader_bridge.autograde_pipeline import explanation_output
from autograder.sandbox import NotebookOutcome

ROOT = Path(__file__).resolve().parents[2]


def _course_config() -> Config:
    with process_state_restored():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    config.GenerateFeedback.preprocessors = []     # GetGrades reads a gradebook: the page is what matters
    return config


def _graded_notebook() -> nbformat.NotebookNode:
    """An autograded notebook whose every student-controlled part holds the payload: a free-text
    answer (markdown solution cell), a choice answer quoted by its grade cell's explanation, and
    a cell's HTML, Markdown, JavaScript, printed and error outputs."""
    assignment = load_assignment("lec01_codesign")
    choice = assignment.config.items_of("choice")[0]
    notebook = NotebookOutcome(status="ok", variables={choice.id: PAYLOAD}, cell_errors=(), output="", message="")
    explanation = grade_report([choice], assignment.answer_key, notebook, "handout.ipynb")[0].feedback_md
    assert PAYLOAD.split(">")[0] in explanation or "onerror" in explanation or "javascript:" in explanation   # quoted

    def meta(grade_id, solution, grade, points=1.0):
        return {"nbgrader": {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": not solution,
                             "points": points, "score": 0.0, "schema_version": 3}}

    instructions = nbformat.v4.new_markdown_cell("## 题目\n\n**粗体** 和 `代码`\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    answer = nbformat.v4.new_markdown_cell(PAYLOAD, metadata=meta("q20", True, True))
    own = nbformat.v4.new_code_cell("show()", metadata=meta("own_cell", True, False))
    own.outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": PAYLOAD, "text/plain": "x"}),
        nbformat.v4.new_output("display_data", data={"text/markdown": PAYLOAD, "text/plain": "x"}),
        nbformat.v4.new_output("display_data", data={"application/javascript": "document.documentElement."
                                                     "setAttribute('data-pwned','js')", "text/plain": "x"}),
        nbformat.v4.new_output("display_data", data={"image/svg+xml": PAYLOAD, "text/plain": "x"}),
        nbformat.v4.new_output("stream", name="stdout", text=PAYLOAD),
        nbformat.v4.new_output("error", ename=PAYLOAD, evalue=PAYLOAD, traceback=[PAYLOAD]),
    ]
    grade = nbformat.v4.new_code_cell(f'check("{choice.id}")', metadata=meta(choice.id, False, True))
    grade.metadata["cs349e"] = {"title": choice.title or choice.id}
    grade.outputs = [explanation_output(explanation)]
    return nbformat.v4.new_notebook(cells=[instructions, answer, own, grade], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


def _feedback_exporter(config: Config):
    """The exporter `nbgrader generate_feedback` builds (GenerateFeedback.start)."""
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory

    with process_state_restored():
        converter = GenerateFeedback(coursedir=CourseDirectory(config=config), config=config)
    return converter.exporter_class(parent=converter, config=converter.config)


def _feedback_html(config: Config) -> str:
    resources = {"nbgrader": {"notebook": "handout", "score": 0.0, "max_score": 3.0, "late_penalty": 0.0}}
    html, _ = _feedback_exporter(config).from_notebook_node(_graded_notebook(), resources=resources)
    return html


# formgrader's own buttons (formgrade_macros.html.j2), not anything a student wrote
FORMGRADE_HANDLERS = {"toggle_name(true);", "toggle_name(false);"}


def _formgrade_html(config: Config) -> str:
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers

    config = copy.deepcopy(config)
    config.HTMLExporter.template_name = "formgrade"   # as FormgradeExtension.build_extra_config sets
    resources = {"assignment_id": "lec01_codesign", "notebook_id": "handout", "submission_id": "s1", "index": 0,
                 "total": 1, "base_url": "", "student": "alice", "last_name": "A", "first_name": "Alice",
                 "notebook_path": "autograded/alice/lec01_codesign/handout.ipynb"}
    assert handlers.template_path
    html, _ = HTMLExporter(config=config).from_notebook_node(_graded_notebook(), resources=resources)
    return html


@pytest.fixture(scope="module")
def config():
    return _course_config()


def test_the_course_turns_nbconverts_sanitizer_on_for_nbgraders_exporter(config):
    exporter = _feedback_exporter(config)
    assert exporter.sanitize_html is True
    assert exporter.template_name == "feedback"


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_nothing_a_student_wrote_runs_in_the_page(config, page, tmp_path):
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    path = tmp_path / f"{page}.html"
    path.write_text(html, encoding="utf-8")
    dom = dump_dom(path, tmp_path / "profile")
    assert_inert(dom, must_show="a link", page_handlers=FORMGRADE_HANDLERS if page == "formgrade" else ())


def test_the_feedback_keeps_its_formatting(config, tmp_path):
    """Headings, bold, code, tables and the explanation stay formatted after cleaning."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(_feedback_html(config), "html.parser")
    text = soup.get_text()
    assert "<p>" not in text and "<strong>" not in text and "**" not in text and "|---|" not in text
    assert [h for h in soup.find_all("h2") if "题目" in h.get_text()]
    assert soup.find("strong", string="粗体") and soup.find("code", string="代码") and soup.find("table")


@pytest.fixture
def beacon_server():
    """A web server a student runs: it records every request an instructor's page makes to it."""
    import http.server
    import threading

    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):      # noqa: N802 (the http.server API)
            hits.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_opening_the_page_requests_nothing_from_a_students_server(config, page, tmp_path, beacon_server, monkeypatch):
    """Images and CSS from a host the student names would tell them when a TA opened their work and
    from where (and a relative URL would send a GET with the instructor's cookies to the hub)."""
    base, hits = beacon_server
    payload = (f'<img src="{base}/html-img"> ![beacon]({base}/md-img) '
               f'<div style="background:url({base}/css-bg); cursor:url({base}/css-cursor), auto; width:99px">x</div>'
               f'<img src="/hub/logout"> <img src="../../../logout">')
    monkeypatch.setattr(sys.modules[__name__], "PAYLOAD", payload)
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    path = tmp_path / f"{page}.html"
    path.write_text(html, encoding="utf-8")
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    flags = [flag for flag in FLAGS if not flag.startswith("--host-resolver-rules")]
    subprocess.run([CHROMIUM, *flags, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                    f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", path.as_uri()],
                   capture_output=True, text=True, timeout=120, check=True, start_new_session=True)
    assert hits == []
    from bs4 import BeautifulSoup
    sources = [img.get("src", "") for img in BeautifulSoup(html, "html.parser").find_all("img")]
    assert not [src for src in sources if src and not src.startswith("data:image/")], sources


# MathJax typesets the page in the TA's browser after every cleaning: TeX a student wrote in a
# free-text answer or printed as Markdown becomes elements there. Its TeX extensions can set links
# (\href, \url), CSS (\style, \bbox), classes and ids (\class, \cssId), fonts (\unicode) and load
# more extensions (\require).
_TEX = ("$\\href{{javascript:{run}}}{{tex link}}$ $\\url{{javascript:{run}}}$ "
        "$\\style{{cursor:url({base}/tex-cursor),auto; background:url({base}/tex-bg)}}{{styled}}$ "
        "$\\bbox[border:1px solid red; background:url({base}/tex-bbox)]{{boxed}}$ "
        "$\\class{{MJX-x}}{{\\cssId{{top}}{{classed}}}}$ $\\unicode[serif]{{x41}}$ $\\require{{HTML}}$ "
        "$$\\frac{{a}}{{b}}$$")


def _local_mathjax(html: str) -> str:
    """The page as a browser offline would run it: its MathJax 2 (as the page asks for it, with
    the page's config) from the copy jupyter_server_mathjax ships (2.7.9; the pages ask cdnjs for
    2.7.7, whose combined config TeX-AMS_CHTML-full this copy lacks: TeX-AMS-MML_HTMLorMML-full
    has the same TeX input)."""
    import re

    mathjax = pytest.importorskip("jupyter_server_mathjax")
    local = (Path(mathjax.__file__).parent / "static" / "MathJax.js").as_uri()
    found = re.findall(r'src="https://cdnjs\.cloudflare\.com/ajax/libs/mathjax/2\.7\.7/latest\.js\?config=([^"]*)"', html)
    assert len(found) == 1, "the page loads MathJax 2.7.7 from cdnjs once"
    config = found[0].replace("TeX-AMS_CHTML-full", "TeX-AMS-MML_HTMLorMML-full")
    return html.replace(f'https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js?config={found[0]}',
                        f"{local}?config={config}")


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_tex_a_student_wrote_sets_no_link_style_or_class_when_mathjax_typesets_it(config, page, tmp_path,
                                                                                  beacon_server, monkeypatch):
    """Before: MathJax's Safe defaults kept \\style{cursor:url(...)} (a request to the student's
    server whenever a TA's pointer crossed the formula) and file: links; now the pages' MathJax
    sets no URL, style, class or id from TeX at all, and still typesets the formulas."""
    from bs4 import BeautifulSoup

    base, hits = beacon_server
    run = "document.documentElement.setAttribute('data-pwned','tex')"
    monkeypatch.setattr(sys.modules[__name__], "PAYLOAD", _TEX.format(run=run, base=base))
    html = _local_mathjax((_feedback_html if page == "feedback" else _formgrade_html)(config))
    path = tmp_path / f"{page}.html"
    path.write_text(html, encoding="utf-8")
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    flags = [flag for flag in FLAGS if not flag.startswith(("--host-resolver-rules", "--virtual-time-budget"))]
    done = subprocess.run([CHROMIUM, *flags, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                           "--allow-file-access-from-files", "--virtual-time-budget=15000",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", path.as_uri()],
                          capture_output=True, text=True, timeout=180, check=True, start_new_session=True)
    dom = done.stdout
    soup = BeautifulSoup(dom, "html.parser")
    typeset = soup.select(".MathJax_CHTML, .MathJax, .MathJax_Display, .mjx-chtml")
    assert len(typeset) >= 8, "MathJax did not typeset the formulas: the test would prove nothing"
    assert_inert(dom, page_handlers=FORMGRADE_HANDLERS if page == "formgrade" else ())
    for element in typeset:
        for inner in [element, *element.find_all(True)]:
            assert "url(" not in inner.get("style", ""), inner
            assert not inner.get("href"), inner   # no link at all from TeX: javascript:, file:, http:
            assert inner.get("id") != "top" and "MJX-x" not in inner.get("class", []), inner
    assert hits == []


# The pages carry Bootstrap's stylesheet, whose classes pin an element over the whole window
# (.dropdown-backdrop, .modal-backdrop, .navbar-fixed-top): a student's answer wearing one is a
# white sheet over the TA's page, with its own text ("score 114/114", a "log in again" link).
OVERLAY = ('<div class="dropdown-backdrop" style="background-color: white">graded: 114/114</div>'
           '<div class="modal-backdrop navbar-fixed-top">log in again</div>')


def _pinned_classes(html: str) -> set[str]:
    """The classes the page's own stylesheet takes out of the flow (position fixed/absolute/sticky)."""
    import re

    from bs4 import BeautifulSoup
    css = " ".join(style.get_text() for style in BeautifulSoup(html, "html.parser").find_all("style"))
    return {name for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css)
            if re.search(r"position\s*:\s*(fixed|absolute|sticky)", body)
            for name in re.findall(r"\.([A-Za-z_][\w-]*)", selector)}


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_a_students_answer_cannot_wear_the_pages_classes_to_cover_it(config, page, tmp_path, monkeypatch):
    from bs4 import BeautifulSoup
    pinned = _pinned_classes(_feedback_html(config))     # Bootstrap 3's, as formgrader loads it too
    assert {"dropdown-backdrop", "modal-backdrop", "navbar-fixed-top"} <= pinned
    notebook = _graded_notebook()
    notebook.cells[1].source = OVERLAY
    notebook.cells[2].outputs = [nbformat.v4.new_output("display_data", data={"text/html": OVERLAY,
                                                                              "text/plain": "x"})]
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    path = tmp_path / f"{page}.html"
    path.write_text((_feedback_html if page == "feedback" else _formgrade_html)(config), encoding="utf-8")
    soup = BeautifulSoup(dump_dom(path, tmp_path / "profile"), "html.parser")
    students = soup.select(".text_cell_render, .output_subarea")    # the cells' content, not the page's chrome
    assert len(students) >= 2
    worn = [(e.name, e["class"]) for area in students for e in area.find_all(class_=True) if pinned & set(e["class"])]
    assert not worn, worn
    assert "graded: 114/114" in soup.get_text() and "log in again" in soup.get_text()   # still shown, as text


def test_a_students_answer_cannot_take_the_id_formgrader_binds_a_score_box_by(config, monkeypatch):
    """formgrade.js binds each grade's score box by `$("#" + grade_id).parents(".nbgrader_cell")`:
    the first element with that id in the page. An answer (or its heading's anchor) holding a later
    cell's grade id would bind that grade to the answer's own panel, so what the TA types for one
    item is saved as another's score."""
    from bs4 import BeautifulSoup
    notebook = _graded_notebook()
    later = notebook.cells[3].metadata["nbgrader"]["grade_id"]          # a grade cell's score box
    comment = f'{notebook.cells[2].metadata["nbgrader"]["grade_id"]}-comment'   # a solution cell's comment box
    notebook.cells[1].source = (f'## {later}\n\n<span id="{later}">x</span> <span id="{comment}">y</span> '
                                f'<span id="statusmessage">z</span>')
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    soup = BeautifulSoup(_formgrade_html(config), "html.parser")
    assert notebook.cells[1].metadata["nbgrader"]["grade_id"] != later
    assert soup.find(id=later).name == "input" and "score" in soup.find(id=later)["class"]
    assert soup.find(id=comment).name == "textarea"
    assert soup.find(id="statusmessage").get_text() != "z"


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_no_link_a_student_wrote_is_live_in_the_page(config, page, tmp_path, monkeypatch):
    """A link in an answer opens the student's site from the TA's session (and names the
    submission's formgrader address to it): the text stays, the link does not."""
    from bs4 import BeautifulSoup
    notebook = _graded_notebook()
    notebook.cells[1].source = ("[log in again](https://example.invalid/login) <a href='http://example.invalid/a'>a</a> "
                                "<a href='//example.invalid/b'>b</a> <https://example.invalid/c> mailto <a href='mailto:x@example.invalid'>m</a>")
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    soup = BeautifulSoup(html, "html.parser")
    live = [a["href"] for area in soup.select(".text_cell_render, .output_subarea")
            for a in area.find_all(href=True) if not a["href"].startswith("#")]
    assert not live, live
    assert "log in again" in soup.get_text()
