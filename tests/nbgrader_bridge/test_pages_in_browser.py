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
from browser import _RUN as _RUN_ATTRIBUTE
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


# Where each page is opened, as a Jupyter server lays it out under a hub's base URL: formgrader's
# view of a submission (it redirects to the trailing slash), and the feedback file opened through
# the server's /files/ (which jupyter_server serves with `Content-Security-Policy: sandbox
# allow-scripts`: the page's scripts run in an origin of their own).
PAGE_PATHS = {"formgrade": "/user/ta/formgrader/submissions/s1/",
              "feedback": "/user/alice/files/lec01_codesign/feedback/2026-01-05T10:00:00/handout.html"}
SANDBOXED = {"feedback": "sandbox allow-scripts"}
MATHJAX_STATIC = "static/jupyter_server_mathjax/"


@pytest.fixture
def jupyter_like_server():
    """A web server laid out as a Jupyter server with jupyter-server-mathjax (the instructor extra):
    each page at its path, MathJax's real files (2.7.9) at <base>/static/jupyter_server_mathjax/.
    Records every path asked of it."""
    import http.server
    import threading
    from urllib.parse import unquote, urlsplit

    static = (Path(pytest.importorskip("jupyter_server_mathjax").__file__).parent / "static").resolve()
    pages, asked = {}, []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):      # noqa: N802 (the http.server API)
            path = unquote(urlsplit(self.path).path)
            asked.append(path)
            body, headers = None, {}
            for name, (where, html) in pages.items():
                if path == where:
                    body, headers["Content-Type"] = html.encode("utf-8"), "text/html; charset=utf-8"
                    if name in SANDBOXED:
                        headers["Content-Security-Policy"] = SANDBOXED[name]
            if body is None and f"/{MATHJAX_STATIC}" in path:
                file = (static / path.split(f"/{MATHJAX_STATIC}", 1)[1]).resolve()
                if file.is_relative_to(static) and file.is_file():
                    body = file.read_bytes()
                    headers["Content-Type"] = "application/javascript" if file.suffix == ".js" else "application/octet-stream"
            self.send_response(200 if body is not None else 404)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def serve(page: str, html: str) -> str:
        pages[page] = (PAGE_PATHS[page], html)
        return f"http://127.0.0.1:{server.server_address[1]}{PAGE_PATHS[page]}"

    yield serve, asked
    server.shutdown()
    server.server_close()


# What Chromium itself asks of the network whatever it opens (measured on about:blank: its
# updater, its clock, its account check), never a page's request.
CHROMIUMS_OWN = {"update.googleapis.com", "clients2.google.com", "accounts.google.com",
                 "content-autofill.googleapis.com"}   # (and its form-filling service, on formgrader's form)


@pytest.fixture
def outside_world():
    """Every other host, as one proxy Chromium must go through (it bypasses it for 127.0.0.1 only):
    records each request that would have left this machine (its URL, or host:port for TLS), but
    Chromium's own."""
    import http.server
    import threading
    from urllib.parse import urlsplit

    left = []

    def record(target: str, host: str) -> None:
        if host not in CHROMIUMS_OWN:
            left.append(target)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):      # noqa: N802
            record(self.path, urlsplit(self.path).hostname or "")
            self.send_response(502)
            self.end_headers()

        do_POST = do_HEAD = do_GET   # noqa: N815

        def do_CONNECT(self):  # noqa: N802
            record(f"CONNECT {self.path}", self.path.rsplit(":", 1)[0])
            self.send_response(502)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}", left
    server.shutdown()
    server.server_close()


def _open_served(url: str, proxy: str, profile: Path, window: tuple[str, ...] = ()) -> str:
    """The DOM of `url` after MathJax had time to typeset it; every host but 127.0.0.1 through `proxy`."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    flags = [flag for flag in FLAGS if not flag.startswith(("--host-resolver-rules", "--virtual-time-budget"))]
    done = subprocess.run([CHROMIUM, *flags, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                           f"--proxy-server=http://{proxy}", "--virtual-time-budget=15000", *window,
                           f"--user-data-dir={profile}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=180, check=True, start_new_session=True)
    return done.stdout


def _typeset(dom: str):
    from bs4 import BeautifulSoup
    return BeautifulSoup(dom, "html.parser").select(".MathJax_CHTML, .MathJax, .MathJax_Display, .mjx-chtml")


def _external_references(html: str) -> list[str]:
    """Every URL in the page a browser would fetch or follow that names a host (http:, https:,
    protocol-relative), in attributes, inline scripts and CSS url()s, and any mention of a CDN."""
    import re

    from bs4 import BeautifulSoup
    soup = BeautifulSoup(html, "html.parser")
    found = [f"<{e.name} {name}={value}>" for e in soup.find_all(True) for name, value in e.attrs.items()
             if isinstance(value, str) and re.match(r"\s*(https?:|//)", value, re.I)]
    for script in soup.find_all("script"):
        found += re.findall(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}[^\s\"']*", script.get_text(), re.I)
    for style in [*soup.find_all("style"), *soup.find_all(style=True)]:
        css = style.get_text() if style.name == "style" else style["style"]
        css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)   # a licence's link in a comment is never fetched
        found += re.findall(r"url\(\s*['\"]?\s*(?:https?:)?//[^)]*\)", css, re.I)
    found += re.findall(r"[\w.-]*(?:cdnjs|jsdelivr|unpkg|googleapis)[\w.-]*", html, re.I)
    return found


FORMULAS = "<b>公式</b> $x^2$ $\\frac{a}{b}$ $\\sqrt{2}$ $$\\sum_i x_i$$"


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_the_page_names_no_host_of_a_third_party(config, page, monkeypatch):
    """Before: both pages loaded MathJax from cdnjs: a third party's script in the TA's session."""
    monkeypatch.setattr(sys.modules[__name__], "PAYLOAD", FORMULAS)
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    assert _external_references(html) == []


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_mathjax_typesets_from_the_pages_own_jupyter_server_and_nothing_leaves(
        config, page, tmp_path, jupyter_like_server, outside_world, monkeypatch):
    serve, asked = jupyter_like_server
    proxy, left = outside_world
    monkeypatch.setattr(sys.modules[__name__], "PAYLOAD", FORMULAS)
    url = serve(page, (_feedback_html if page == "feedback" else _formgrade_html)(config))
    dom = _open_served(url, proxy, tmp_path / "profile")
    assert left == []
    assert len(_typeset(dom)) >= 4, "MathJax did not typeset the formulas"
    base = PAGE_PATHS[page].split("/formgrader/" if page == "formgrade" else "/files/")[0]
    mathjax = [path for path in asked if path.startswith(f"{base}/{MATHJAX_STATIC}")]
    assert f"{base}/{MATHJAX_STATIC}MathJax.js" in mathjax


def test_the_feedback_opened_from_disk_loads_nothing(config, tmp_path, outside_world, monkeypatch):
    """Opened as a file (downloaded, or from the course folder): no server of its own, so no MathJax
    at all rather than anyone else's; the TeX stays as text."""
    proxy, left = outside_world
    monkeypatch.setattr(sys.modules[__name__], "PAYLOAD", FORMULAS)
    path = tmp_path / "feedback.html"
    path.write_text(_feedback_html(config), encoding="utf-8")
    dom = _open_served(path.as_uri(), proxy, tmp_path / "profile")
    assert left == [] and _typeset(dom) == []
    assert "\\frac{a}{b}" in dom


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_tex_a_student_wrote_sets_no_link_style_or_class_when_mathjax_typesets_it(
        config, page, tmp_path, beacon_server, jupyter_like_server, outside_world, monkeypatch):
    """Before: MathJax's Safe defaults kept \\style{cursor:url(...)} (a request to the student's
    server whenever a TA's pointer crossed the formula) and file: links; now the pages' MathJax
    sets no URL, style, class or id from TeX at all, and still typesets the formulas."""
    base, hits = beacon_server
    serve, _ = jupyter_like_server
    proxy, left = outside_world
    run = "document.documentElement.setAttribute('data-pwned','tex')"
    monkeypatch.setattr(sys.modules[__name__], "PAYLOAD", _TEX.format(run=run, base=base))
    url = serve(page, (_feedback_html if page == "feedback" else _formgrade_html)(config))
    dom = _open_served(url, proxy, tmp_path / "profile")
    typeset = _typeset(dom)
    assert len(typeset) >= 8, "MathJax did not typeset the formulas: the test would prove nothing"
    assert_inert(dom, page_handlers=FORMGRADE_HANDLERS if page == "formgrade" else ())
    for element in typeset:
        for inner in [element, *element.find_all(True)]:
            assert "url(" not in inner.get("style", ""), inner
            assert not inner.get("href"), inner   # no link at all from TeX: javascript:, file:, http:
            assert inner.get("id") != "top" and "MJX-x" not in inner.get("class", []), inner
    assert hits == [] and left == []


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


def _png(width: int, height: int) -> str:
    """A grey PNG of that size as a data: URL (a few hundred bytes, however tall)."""
    import base64
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode()


# Inline CSS and image sizes a student's answer could use to push the next item's score box away
# (down, or sideways) on the TA's page; each next to the same text without them.
LAYOUT_TRICKS = {
    "tall": ('<div style="height:100000px">tall</div>', "<div>tall</div>"),
    "floated": ('<div style="display:block; float:left; width:100%; height:20000px">floated</div>', "<div>floated</div>"),
    "huge font": ('<span style="font-size:5000px; line-height:100000px">big</span>', "<span>big</span>"),
    "raised": ('<span style="vertical-align:100000px">raised</span> '
               '<span style="letter-spacing:3000px; text-indent:-9999px; white-space:nowrap">spaced out</span>',
               "<span>raised</span> <span>spaced out</span>"),
    "image attributes": (f'<img src="{_png(1, 1)}" width="3000" height="100000">', f'<img src="{_png(1, 1)}">'),
    "tall image": (f'<img src="{_png(1, 20000)}">', f'<img src="{_png(1, 1)}">'),
    # `align` is a float in HTML: the table floated out of its cell, the next panel wrapped round it
    # (formgrader's score box 57 px sideways, the feedback's score heading under the student's table)
    "aligned table": ('<table align="left" style="background-color:white">'
                      + ("<tr><td>得分：1.0 / 1.0 graded " + "W" * 50 + "</td></tr>") * 40 + "</table>",
                      "<table>" + ("<tr><td>得分：1.0 / 1.0 graded " + "W" * 50 + "</td></tr>") * 40 + "</table>"),
    "aligned image": (f'<img src="{_png(200, 200)}" align="right"><p align="right">r</p>',
                      f'<img src="{_png(200, 200)}"><p>r</p>'),
    "many lines": ("<p>" + "line<br>" * 3000 + "</p>", "<p>line</p>"),
}
# A TA's screen: the floats and wide content that move the score box sideways need the room.
WINDOW = ("--window-size=1280,900",)
# Where the next item's score is shown: formgrader's score box (its input carries the grade id);
# the feedback's panel heading after the grade's anchor.
_MEASURE = """<script>
window.addEventListener("load", function () {
    var id = %s, box = document.getElementById(id);
    if (!box || box.tagName !== "INPUT") { box = document.getElementsByName(id)[0].nextElementSibling; }
    var rect = box.getBoundingClientRect(), em = parseFloat(getComputedStyle(document.body).fontSize);
    var top = rect.top + window.scrollY, left = rect.left + window.scrollX;
    box.scrollIntoView({block: "center"});            // what a click on the box lands on
    rect = box.getBoundingClientRect();
    var hit = document.elementFromPoint(rect.left + Math.min(10, rect.width / 2), rect.top + rect.height / 2);
    document.documentElement.setAttribute("data-layout", JSON.stringify(
        {top: top, left: left, em: em, covered: !(hit && (hit === box || box.contains(hit))),
         hit: hit ? hit.tagName : null}));
});
</script></body>"""


def _score_box_at(config, page: str, html_in_answer: str, where: str, tmp_path: Path, monkeypatch) -> dict:
    import json

    from bs4 import BeautifulSoup
    notebook = _graded_notebook()
    grade_id = notebook.cells[3].metadata["nbgrader"]["grade_id"]
    if where == "answer":
        notebook.cells[1].source = html_in_answer
    else:
        notebook.cells[2].outputs = [nbformat.v4.new_output("display_data", data={"text/html": html_in_answer,
                                                                                  "text/plain": "x"})]
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    path = tmp_path / f"{page}-{abs(hash(html_in_answer))}.html"
    path.write_text(html.replace("</body>", _MEASURE % json.dumps(grade_id), 1), encoding="utf-8")
    dom = dump_dom(path, tmp_path / f"profile-{path.stem}", WINDOW)
    return json.loads(BeautifulSoup(dom, "html.parser").html["data-layout"])


@pytest.mark.slow   # two Chromium starts per case, 24 cases
@pytest.mark.parametrize("trick", LAYOUT_TRICKS)
@pytest.mark.parametrize("where", ["answer", "output"])
@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_a_students_html_cannot_push_the_next_score_box_away(config, page, where, trick, tmp_path, monkeypatch):
    """Before: inline height, float, font-size, line-height, vertical-align and image sizes were
    kept, and the next item's score box moved by up to 100,000 px. Now it moves by at most what an
    image's bound allows (40 lines), and never sideways."""
    hostile, plain = LAYOUT_TRICKS[trick]
    attacked = _score_box_at(config, page, hostile, where, tmp_path, monkeypatch)
    baseline = _score_box_at(config, page, plain, where, tmp_path, monkeypatch)
    em = baseline["em"]
    assert abs(attacked["top"] - baseline["top"]) <= 41 * em, (attacked, baseline)
    assert abs(attacked["left"] - baseline["left"]) <= em, (attacked, baseline)
    assert not attacked["covered"], attacked


# A code cell's input is shown whole (the release's largest is 100 lines), within CODE_LINES lines' height.
CODE_LINES = 150


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_a_students_code_cannot_push_the_next_score_box_away(config, page, tmp_path, monkeypatch):
    """Before: a code cell of 150,000 lines (900 KB, within what a page shows) pushed the next item's
    score box 2.4 million px down. Now a cell's input is scrolled inside past CODE_LINES lines."""
    import json

    from bs4 import BeautifulSoup

    def score_box(source: str, tag: str) -> dict:
        notebook = _graded_notebook()
        grade_id = notebook.cells[3].metadata["nbgrader"]["grade_id"]
        notebook.cells[2].source, notebook.cells[2].outputs = source, []
        monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
        path = tmp_path / f"{page}-{tag}.html"
        html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
        path.write_text(html.replace("</body>", _MEASURE % json.dumps(grade_id), 1), encoding="utf-8")
        return json.loads(BeautifulSoup(dump_dom(path, tmp_path / f"profile-{tag}", WINDOW), "html.parser").html["data-layout"])

    attacked, baseline = score_box("x = 1\n" * 150_000, "long"), score_box("x = 1\n", "short")
    em = baseline["em"]
    assert abs(attacked["top"] - baseline["top"]) <= (CODE_LINES * 1.25 + 1) * em, (attacked, baseline)
    assert abs(attacked["left"] - baseline["left"]) <= em and not attacked["covered"], (attacked, baseline)


def test_align_is_kept_only_as_a_table_cells_alignment():
    from autograder.nbgrader_bridge.safe_html import clean_html
    cleaned = clean_html('<table align="left"><tr><td align="right">1</td><th align="center">h</th></tr></table>'
                         '<img src="data:image/png;base64,AAAA" align="left"><p align="right">p</p><div align=left>d</div>')
    assert cleaned.count("align=") == 2 and 'td align="right"' in cleaned and 'th align="center"' in cleaned


# TeX sizes and moves boxes of its own (MathJax typesets it in the TA's browser after every
# cleaning): a rule 100,000 px high, a size command, a token's mathsize, raised and lowered boxes
# laid over the next score box, spaces 20,000 px wide; each next to the same answer without it.
TEX_TRICKS = {
    "Rule": r"answer $\Rule{1px}{100000px}{0px}$",
    "Huge Rule": r"answer $\mspace{0mu}\Huge\Rule{0px}{40000px}{40000px}$",
    "mathsize": r"answer $\mmlToken{mi}[mathsize='3000px']{x}$ $\mmlToken{mo}[minsize='5000px' lspace='9000px']{(}$",
    "rule and space": r"answer $\rule[-50000px]{1px}{1px}\Space{1px}{30000px}{30000px}\raise{40000px}{x}$",
    "array rows": r"answer $\begin{array}{c}a\\[100000px]b\end{array}$ $\bbox[50000px]{x}$",
    "raised over the box": r"answer $\smash{\lower{260px}{\rlap{\colorbox{white}{\Rule{1200px}{0px}{300px}}}}}$",
    "sideways": r"answer $\hspace{20000px}x\kern-20000px y\moveleft{9000px}{z}$",
}
# Measured until the dump: MathJax typesets after the page's load event. And how far the answer's
# content reaches inside its cell (scrolled there), which TeX's own bounds keep small.
_MEASURE_TYPESET = _MEASURE.replace('window.addEventListener("load", function () {', 'setInterval(function () {') \
    .replace("\n});\n</script>", "\n}, 250);\n</script>") \
    .replace("hit: hit ? hit.tagName : null}", """hit: hit ? hit.tagName : null, answer: Array.prototype.reduce.call(
            document.querySelectorAll(".text_cell_render"),
            function (most, cell) { return [Math.max(most[0], cell.scrollWidth), Math.max(most[1], cell.scrollHeight)]; },
            [0, 0])}""")


def _score_box_typeset(config, page: str, tex: str, serve, proxy: str, profile: Path, monkeypatch) -> dict:
    import json

    from bs4 import BeautifulSoup
    notebook = _graded_notebook()
    grade_id = notebook.cells[3].metadata["nbgrader"]["grade_id"]
    notebook.cells[1].source = tex
    notebook.cells[2].outputs = []
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    dom = _open_served(serve(page, html.replace("</body>", _MEASURE_TYPESET % json.dumps(grade_id), 1)), proxy, profile,
                       WINDOW)
    assert _typeset(dom), "MathJax did not typeset the answer: the test would prove nothing"
    return json.loads(BeautifulSoup(dom, "html.parser").html["data-layout"])


@pytest.mark.slow   # Chromium typesets each page twice, 14 cases
@pytest.mark.parametrize("trick", TEX_TRICKS)
@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_a_students_tex_cannot_push_the_next_score_box_away(config, page, trick, tmp_path, jupyter_like_server,
                                                             outside_world, monkeypatch):
    """Before: MathJax's \\Rule pushed the next score box 99,984 px down, \\Huge\\Rule 199,180 px and a
    token's mathsize 3,000 px (Safe's fontsize was "all"). Now it moves by at most the answer's bound."""
    serve, _ = jupyter_like_server
    proxy, _ = outside_world
    attacked = _score_box_typeset(config, page, TEX_TRICKS[trick], serve, proxy, tmp_path / "a", monkeypatch)
    baseline = _score_box_typeset(config, page, "answer $x^2$", serve, proxy, tmp_path / "b", monkeypatch)
    em = baseline["em"]
    assert abs(attacked["top"] - baseline["top"]) <= 41 * em, (attacked, baseline)
    assert abs(attacked["left"] - baseline["left"]) <= em, (attacked, baseline)
    assert not attacked["covered"], attacked
    (width, height), (plain_width, plain_height) = attacked["answer"], baseline["answer"]
    assert height - plain_height <= 10 * em and width - plain_width <= 30 * em, (attacked, baseline)  # 3em, 20em, x1.44


def _with_student_metadata(monkeypatch, *, tags=(), notebook_metadata=None):
    """_graded_notebook with a student's cell tags on the own cell and notebook metadata added."""
    notebook = _graded_notebook()
    notebook.cells[2].metadata["tags"] = list(tags)
    notebook.metadata.update(notebook_metadata or {})
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_a_cells_tags_cannot_wear_the_pages_classes(config, page, tmp_path, monkeypatch):
    """nbconvert writes each tag of a cell into the class attribute of the cell's outer <div>
    (`celltag_<tag>`), escaped for quotes but not for spaces: a tag "x modal-backdrop" gave the
    student's cell Bootstrap's page-covering class, laid over the TA's page with the student's text."""
    from bs4 import BeautifulSoup
    pinned = _pinned_classes(_feedback_html(config))
    _with_student_metadata(monkeypatch, tags=["x modal-backdrop", "y navbar-fixed-top", 'z" onclick="alert(1)'])
    path = tmp_path / f"{page}.html"
    path.write_text((_feedback_html if page == "feedback" else _formgrade_html)(config), encoding="utf-8")
    soup = BeautifulSoup(dump_dom(path, tmp_path / "profile"), "html.parser")
    cells = soup.select("div.cell")    # the cells with what wraps them, not the page's own chrome
    assert len(cells) == len(_graded_notebook().cells)
    worn = [cell["class"] for cell in cells if pinned & set(cell["class"])]   # where the tags are written
    assert not worn, worn
    assert not [cell for cell in cells if set(cell.attrs) - {"class", "id"}]



@pytest.mark.parametrize("page", ["feedback", "formgrade"])
@pytest.mark.parametrize("field", ["pygments_lexer", "name"])
def test_the_notebooks_language_cannot_give_code_cells_the_pages_classes(config, page, field, tmp_path, monkeypatch):
    """nbconvert writes the notebook's own `language_info.pygments_lexer` (else its `name`) into the
    class of every code cell's highlighted input (`highlight hl-<language>`), escaped for quotes but
    not for spaces, and autograde keeps a student's notebook metadata: `ipython3 modal-backdrop` gave
    all 150 code cells of lecture 1's feedback Bootstrap's page-covering class, the last one laid
    fixed over the TA's whole page (score headings and formgrader's score boxes under it)."""
    from bs4 import BeautifulSoup
    pinned = _pinned_classes(_feedback_html(config))
    info = {"name": "python", "pygments_lexer": "ipython3"}
    info[field] = "ipython3 modal-backdrop navbar-fixed-top"
    if field == "name":
        del info["pygments_lexer"]
    _with_student_metadata(monkeypatch, notebook_metadata={"language_info": info})
    path = tmp_path / f"{page}.html"
    path.write_text((_feedback_html if page == "feedback" else _formgrade_html)(config), encoding="utf-8")
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    inputs = soup.select("div.cell div.input_area")
    assert len(inputs) == 2                              # the student's code cell and the grade cell
    worn = [e["class"] for area in inputs for e in [area, *area.find_all(class_=True)] if pinned & set(e["class"])]
    assert not worn, worn
    assert 'check("' in soup.get_text() and "show()" in soup.get_text()   # the code is still shown


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
@pytest.mark.parametrize("where", ["code cell", "fenced block"])
def test_code_a_student_wrote_is_shown_in_bounded_time(config, page, where, monkeypatch):
    """Pygments' Python lexers take time in the square of a run of blank lines: a code cell of
    16,000 characters of " \\n" took 3.1 s of CPU to highlight with the python lexer and 33 s with
    ipython3 (the one a notebook saved by Jupyter names), 2 MB hours. generate_feedback renders the
    class one page after another and formgrader renders the TA's view on request: one student's cell
    (or a fenced block in a free-text answer, whose lexer the student names) stalled both."""
    import time
    notebook = _graded_notebook()
    blank = " \n" * 6_000
    if where == "code cell":
        notebook.cells[2].source = "show()\n" + blank
    else:
        notebook.cells[1].source = "my answer\n\n```ipython3\nshow()\n" + blank + "```\n"
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    started = time.process_time()
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    spent = time.process_time() - started
    assert "show()" in html and html.count("\n \n") >= 2_900      # shown, as it was written
    assert spent < 6, f"{spent:.1f} s of CPU for one page"

@pytest.mark.parametrize("page", ["feedback", "formgrade"])
@pytest.mark.parametrize("where", ["markdown answer", "raw html cell", "many cells", "html outputs",
                                   "markdown outputs", "code of markup"])
def test_what_a_student_wrote_besides_code_is_shown_in_bounded_time(config, page, where, monkeypatch):
    """Markdown costs about 15 µs of CPU a character to render and clean, a tag in raw HTML about
    70 µs, and every cell about 0.5 ms whatever it holds: a free-text answer of 1 MB took 25 s of CPU
    for one page, 10,000 one-letter cells 5.5 s, and the trusted grader reads notebooks of 20 MB
    (collect takes 100 MB). The outputs the grader keeps (64 KB a value, 2 MB a notebook) were 17 s
    of HTML tags, a code cell of 8 MB of markup text 10 s. generate_feedback renders the class one page after another and formgrader
    renders the TA's view on its server's one thread, for every TA, each time it is opened."""
    import time

    from bs4 import BeautifulSoup
    notebook = _graded_notebook()
    if where == "markdown answer":
        notebook.cells[1].source = "my answer\n\n" + "*a" * 300_000
    elif where == "raw html cell":
        notebook.cells.insert(2, nbformat.v4.new_raw_cell("my answer " + "<b>a</b>" * 150_000,
                                                          metadata={"raw_mimetype": "text/html"}))
    elif where == "code of markup":       # past the highlight budget, plain, but cleaned again: 1.3 s a MB
        notebook.cells[2].source = "my answer = '" + "<b>a</b>&amp;" * 600_000 + "'\n"
    elif where == "many cells":
        notebook.cells[2:2] = [nbformat.v4.new_markdown_cell(f"my answer {index}") for index in range(15_000)]
    else:
        kind, value = ("text/html", "<b>a</b>" * 8_000) if where == "html outputs" else ("text/markdown", "*a" * 32_000)
        notebook.cells[2].outputs = [nbformat.v4.new_output("display_data", data={kind: value, "text/plain": "x"})
                                     for _ in range(32)]       # what the grader keeps of a notebook's outputs
        notebook.cells[1].source = "my answer"
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    started = time.process_time()
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    spent = time.process_time() - started
    shown = BeautifulSoup(html, "html.parser").get_text()
    assert "my answer" in shown and 'check("' in shown     # the answer is shown, and the grade cell after it
    assert spent < 6, f"{spent:.1f} s of CPU for one page"


WIDGET_STATE = {"application/vnd.jupyter.widget-state+json": {
    "version_major": 2, "version_minor": 0,
    "state": {"w1": {"model_name": "HTMLModel", "model_module": "@jupyter-widgets/controls", "model_module_version": "2.0.0",
                     "state": {"value": PAYLOAD}}}}}


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_widget_state_a_student_wrote_loads_no_widget_manager(config, page, monkeypatch):
    """A notebook's `widgets` metadata makes nbconvert's page fetch a widget manager from a CDN and
    render the stored widgets (an HTML widget's value is set as HTML): the kit's notebooks hold no
    widgets, so a student's widget state is data and the page loads nothing for it."""
    _with_student_metadata(monkeypatch, notebook_metadata={"widgets": WIDGET_STATE, "title": "</title><script>x()</script>"})
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    assert _external_references(html) == []
    assert "widget-state+json" not in html and "embed-amd" not in html
    assert "<script>x()</script>" not in html


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
@pytest.mark.parametrize("attachments", [None, {"plot.png": {}}])
def test_an_attachment_the_cell_does_not_hold_is_no_error_of_the_page(config, page, attachments, monkeypatch):
    """A free-text answer `![f](attachment:plot.png)` whose cell holds no such attachment (or an
    empty one, a valid notebook) made nbconvert raise (InvalidNotebook: missing attachment;
    StopIteration): generate_feedback wrote no page for that student and formgrader's view of the
    submission failed, so its free-text items could not be graded. The same for a Markdown output."""
    notebook = _graded_notebook()
    notebook.cells[1].source = "我的回答 ![f](attachment:plot.png)"
    if attachments is not None:
        notebook.cells[1]["attachments"] = attachments
    notebook.cells[2].outputs = [nbformat.v4.new_output("display_data", data={
        "text/markdown": "输出 ![x](attachment:p.png)", "text/plain": "x"})]
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    assert "我的回答" in html and "输出" in html
    assert "attachment:" not in html.split("</head>")[-1].replace("![f](attachment:plot.png)", "")


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_a_raw_cell_a_student_marks_as_html_is_cleaned_like_an_output(config, page, tmp_path, monkeypatch):
    """A raw cell whose `raw_mimetype` says text/html is written into the page as it is (nbconvert's
    rawcell block), and autograde keeps the student's metadata: the raw cell keeps that mark into
    formgrader's view and the feedback page. It goes through the same cleaning."""
    notebook = _graded_notebook()
    raw = nbformat.v4.new_raw_cell(PAYLOAD + "<p>a raw answer</p>", metadata={"raw_mimetype": "text/html"})
    notebook.cells.insert(2, raw)
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    assert "a raw answer" in html          # the raw cell is on the page, so its cleaning is what is tested
    path = tmp_path / f"{page}.html"
    path.write_text(html, encoding="utf-8")
    assert_inert(dump_dom(path, tmp_path / "profile"), must_show="a link",
                 page_handlers=FORMGRADE_HANDLERS if page == "formgrade" else ())


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_a_cells_metadata_cannot_hide_it_or_its_score_box_from_the_page(config, page, monkeypatch):
    """nbconvert leaves out every cell whose metadata says `transient: {remove_source: true}`, and
    autograde keeps a student's cell metadata: on their answer it hid the answer with its score box,
    on their own code cell the code the TA reviews, on a grade cell (the release restores its source
    and nbgrader's metadata, not this) formgrader's score box of that item."""
    from bs4 import BeautifulSoup
    notebook = _graded_notebook()
    notebook.cells[1].source = "my hidden answer"
    notebook.cells[2].source = "my_hidden_code()"
    for cell in notebook.cells[1:]:
        cell.metadata["transient"] = {"remove_source": True}
    grade_id = notebook.cells[3].metadata["nbgrader"]["grade_id"]
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    soup = BeautifulSoup((_feedback_html if page == "feedback" else _formgrade_html)(config), "html.parser")
    shown = soup.get_text()
    assert "my hidden answer" in shown and "my_hidden_code()" in shown and 'check("' in shown
    if page == "formgrade":
        assert soup.find("input", id=grade_id) and soup.find("input", id="q20"), "a score box is missing"


@pytest.mark.parametrize("page", ["feedback", "formgrade"])
def test_an_outputs_metadata_sets_no_attribute_address_or_frame_in_the_page(config, page, tmp_path, monkeypatch):
    """nbconvert writes an output's metadata into the page outside the cleaner: an image's width
    unquoted (`1 onerror=…` became an event handler), its `filenames` entry as the image's address
    (a request to the student's server, or with the TA's cookies to the hub, as the page opened) and
    `isolated` HTML as a frame. Autograde keeps no output's metadata; the pages keep none either."""
    from bs4 import BeautifulSoup
    run = _RUN_ATTRIBUTE.replace("'", "`").format("width")
    notebook = _graded_notebook()
    notebook.cells[2].outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": _png(1, 1).split(",", 1)[1], "text/plain": "x"},
                               metadata={"image/png": {"width": f"1 onerror={run}", "height": "1 onload=x()"},
                                         "filenames": {"image/png": "http://127.0.0.1:9/pixel"}}),
        nbformat.v4.new_output("display_data", data={"text/html": "<b>isolated</b>", "text/plain": "x"},
                               metadata={"text/html": {"isolated": True}})]
    monkeypatch.setattr(sys.modules[__name__], "_graded_notebook", lambda: notebook)
    html = (_feedback_html if page == "feedback" else _formgrade_html)(config)
    soup = BeautifulSoup(html, "html.parser")
    assert not soup.find("iframe") and "isolated" in soup.get_text()
    sources = [img.get("src", "") for img in soup.find_all("img")]
    assert "data:image/png" in " ".join(sources) and not [s for s in sources if s and not s.startswith("data:image/")]
    path = tmp_path / f"{page}.html"
    path.write_text(html, encoding="utf-8")
    assert_inert(dump_dom(path, tmp_path / "profile"), page_handlers=FORMGRADE_HANDLERS if page == "formgrade" else ())
