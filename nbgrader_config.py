"""nbgrader configuration of the CS349E course: run every `nbgrader ...` command from this folder.

The repository root is the course root. `assignments/` is nbgrader's source folder and holds only
what students see; solutions live in `solutions/`, hidden tests in `autograder/`. Scores come from
the trusted grader: `python -m autograder pregrade` pins its results and executed notebooks for the
collected files, and `nbgrader autograde` writes those into the gradebook and the autograded
notebooks without starting a kernel (see autograder/nbgrader_bridge/autograde_pipeline.py).
"""

import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent

# nbgrader runs the bare command `alembic` when it creates a gradebook: find the one installed next
# to this interpreter even when the virtualenv is not activated.
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])

# This nbgrader process (trusted) imports the course's own modules.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.engine.vocabulary import ANSWER_STUB, TEXT_STUB  # noqa: E402  (needs ROOT on sys.path)
from autograder.engine.registry import load_config  # noqa: E402

c = get_config()  # noqa: F821  (provided by nbgrader when it executes this file)

# ------------------------------------------------------------------ course layout
c.CourseDirectory.root = str(ROOT)
c.CourseDirectory.source_directory = "assignments"
c.CourseDirectory.course_id = "cs349e"
# Never release (or restore into a submission) what running the public tests leaves behind.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".pytest_cache", ".hypothesis"]

# ------------------------------------------------------------------ generate_assignment
# Answer cells in the source already hold only the stub the build wrote; nbgrader replaces each
# whole solution cell with these, i.e. leaves it as it is.
c.ClearSolutions.code_stub = {"python": ANSWER_STUB}
c.ClearSolutions.text_stub = TEXT_STUB

# ------------------------------------------------------------------ autograde
# The student's own files (grading.toml `student_files`) are graded as submitted; every other
# file of the folder (self-check helper, public tests, shared copies) is restored from the source.
_ASSIGNMENTS = sorted(p.parent.name for p in (ROOT / "assignments").glob("*/grading.toml"))
c.Autograde.exclude_overwriting = {
    name: [f for f in load_config(name).student_files if not f.endswith(".ipynb")]
    for name in _ASSIGNMENTS
}
# nbgrader reads each submitted notebook whole before any preprocessor: one that holds more JSON than a
# notebook does (18 MB of `{}` cost 3 GB) is refused first, that student listed as failed
# (autograder/nbgrader_bridge/bounded_read.py).
c.Autograde.exporter_class = "autograder.nbgrader_bridge.bounded_read.BoundedNotebookExporter"
# A student's duplicated or corrupted cell metadata must not abort the batch (nbgrader 0.9.6 does).
c.Autograde.sanitize_preprocessors = [
    "autograder.nbgrader_bridge.valid_utf8.ValidUtf8Text",   # a lone surrogate no UTF-8 file holds: escaped
    "autograder.nbgrader_bridge.sanitize_metadata.DropInvalidCellMetadata",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "autograder.nbgrader_bridge.overwrite_cells.OverwriteCellsReadOnce",   # nbgrader's, one read per notebook
    # at most 1,000 cells reach autograded/, which both pages read (the release's, then the student's own);
    # after OverwriteCells, where only cells whose grade_id the release knows keep nbgrader's metadata
    "autograder.nbgrader_bridge.page_cells.BoundStudentCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# nbconvert validates the whole notebook after each of these steps; once after the last is enough
# (an invalid notebook is still refused, naming the last step instead of the guilty one).
c.NotebookExporter.optimistic_validation = True
# The feedback shows no Python warnings (numpy's RuntimeWarning) the notebook printed to stderr.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"(?m)^\S.*:\d+: \w*Warning: "

# ------------------------------------------------------------------ autograde: trusted scores and outputs, no kernel
# Requires `python -m autograder pregrade <assignment>` first. Every automatic grade cell's score
# and shown output, and every other cell's outputs, come from the pinned trusted result and
# executed notebook of the collected files: the grader ran the notebook once, in its sandbox;
# autograde runs no student code.
c.Autograde.autograde_preprocessors = [
    "autograder.nbgrader_bridge.autograde_pipeline.LoadPinnedResult",
    "autograder.nbgrader_bridge.autograde_pipeline.WriteExecutedOutputs",
    "nbgrader.preprocessors.IgnorePattern",
    # (nbgrader's list also names nbconvert's ClearMetadataPreprocessor, which is off unless enabled and so
    # never ran: the student's notebook and cell metadata reach autograded/ and the pages, whose own filters
    # keep it inert — safe_html.py's highlight_code, clean_html and cell_tag_classes)
    "nbgrader.preprocessors.LimitOutput",
    "autograder.nbgrader_bridge.autograde_pipeline.ShowTrustedFeedback",
    "autograder.nbgrader_bridge.autograde_pipeline.SaveTrustedGrades",
    "autograder.nbgrader_bridge.late.CourseAssignLatePenalties",   # nbgrader's, and says when no time is known
    "nbgrader.preprocessors.CheckCellMetadata",
    "autograder.nbgrader_bridge.valid_utf8.ValidUtf8Text",   # and in what the pinned run added (an error's text)
]

# ------------------------------------------------------------------ generate_feedback
# Feedback HTML shows every output: keep the frames of the student's own cells and files, drop
# the rest of each traceback.
# (Names, not classes: reading this file must not import nbgrader, which takes seconds.)
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "autograder.nbgrader_bridge.feedback_tracebacks.HideForeignFrames",
]
# nbgrader's feedback page with Chinese labels (autograder/nbgrader_bridge/templates/feedback/),
# found before nbgrader's own template of the same name. The grade cells' explanations are
# text/markdown outputs written by the autograde pipeline: nbconvert renders them as HTML.
c.HTMLExporter.extra_template_basedirs = [
    str(ROOT / "autograder" / "nbgrader_bridge" / "templates"),
    str(Path(importlib.util.find_spec("nbgrader").submodule_search_locations[0]) / "server_extensions" / "formgrader" / "templates"),
]

# What a student wrote (markdown answers, their cells' outputs, the explanations quoting their
# answers) is data on the feedback page and in formgrader, which opens in the instructor's session:
# nbconvert's sanitizer on, and both of its filters replaced by one that keeps the formatting and
# also cleans markdown cells (autograder/nbgrader_bridge/safe_html.py).
c.HTMLExporter.sanitize_html = True
# Both pages show at most 1,000 cells (every cell the release made, then the student's own in order):
# each costs a page about 0.5 ms whatever it holds (autograder/nbgrader_bridge/page_cells.py). Autograde
# writes autograded/ bounded the same way; this bounds a page of a notebook autograded otherwise.
# No cell's metadata leaves it (or its score box) out of the page (autograder/nbgrader_bridge/shown_cells.py),
# and no output's metadata is written into it (output_metadata.py).
c.HTMLExporter.preprocessors = ["autograder.nbgrader_bridge.page_cells.BoundStudentCells",
                                "autograder.nbgrader_bridge.shown_cells.ShowEveryCell",
                                "autograder.nbgrader_bridge.output_metadata.DropOutputMetadata"]
# nbconvert checks the whole notebook after each of its dozen preprocessors; once, after the last, is enough.
c.HTMLExporter.optimistic_validation = True
c.HTMLExporter.filters = {
    "clean_html": "autograder.nbgrader_bridge.safe_html.clean_cell_html",      # a raw cell's within the page's budget
    "markdown2html": "autograder.nbgrader_bridge.safe_html.markdown2html",
    "cell_tag_classes": "autograder.nbgrader_bridge.safe_html.cell_tag_classes",   # templates/base/celltags.j2
    "highlight_code": "autograder.nbgrader_bridge.safe_html.highlight_code",       # the course's lexer, not the notebook's
}

# formgrader serves a submission's files (autograded/<student>/<assignment>/*) from the instructor's
# origin: a handed-in .html or .svg is sent sandboxed, no script of it runs
# (autograder/nbgrader_bridge/formgrader_files.py; only in formgrader's own server, which reads this file).
from autograder.nbgrader_bridge.formgrader_files import sandbox_submission_files  # noqa: E402
sandbox_submission_files()
# A student's notebook or Markdown file opened in this server's JupyterLab loads no picture, video or
# font from another address: JupyterLab's sanitizer keeps them (autograder/nbgrader_bridge/grader_page_loads.py).
from autograder.nbgrader_bridge.grader_page_loads import bound_page_loads  # noqa: E402
bound_page_loads()
# formgrader's own pages (gradebook, manage students, ...) write the ids of their URL into the page
# without escaping: every value they are given is escaped (autograder/nbgrader_bridge/formgrader_pages.py).
from autograder.nbgrader_bridge.formgrader_pages import escape_formgrader_pages  # noqa: E402
escape_formgrader_pages()

# ------------------------------------------------------------------ the exchange (release, collect)
# Where it is and how to create it on a server: docs/exchange.md. Students' fetch and submit are
# nbgrader's own; the instructor's release makes inbound/ sticky, and collect treats inbound/ as
# student data: a folder owned by another account than the student it names is refused; only regular
# files owned by the submitter are copied, never through a link; the submission time is the folder
# name's, checked against its ctime, never the student's timestamp.txt. What it refuses or corrects is
# listed in collect_flagged/<assignment>.csv and by `python -m autograder reconcile`
# (autograder/nbgrader_bridge/exchange.py).
c.ExchangeFactory.release_assignment = "autograder.nbgrader_bridge.exchange.GuardedReleaseAssignment"
c.ExchangeFactory.collect = "autograder.nbgrader_bridge.exchange.GuardedExchangeCollect"
# release_feedback writes every student's page into the exchange: the same checks as release and collect first.
c.ExchangeFactory.release_feedback = "autograder.nbgrader_bridge.exchange.GuardedReleaseFeedback"
# `nbgrader list --inbound` prints students' folder names: control characters shown as escapes.
c.ExchangeFactory.list = "autograder.nbgrader_bridge.exchange.GuardedExchangeList"

# ------------------------------------------------------------------ zip_collect
# An LMS download in downloaded/<assignment>/archive/: either one zip per student named
# `<student>_<anything>.zip`, or Canvas-style files `<student>[_LATE]_<id>_<id>_<file name>`
# (zips too). The pattern is matched against each LMS file's own name only, never a path inside a
# student's archive; student ids must not contain "_". Our extractor refuses a student's upload
# that could harm the machine or steer the collection (flagged.csv next to archive/), and
# the collector strips Canvas's resubmission counter (autograder/nbgrader_bridge/collect.py).
c.ZipCollectApp.extractor_plugin = "autograder.nbgrader_bridge.collect.GuardedLmsExtractor"
c.ZipCollectApp.collector_plugin = "autograder.nbgrader_bridge.collect.LmsFileNameCollector"
c.FileNameCollectorPlugin.valid_ext = [".ipynb", ".py"]
c.FileNameCollectorPlugin.named_regexp = (
    r"(?P<student_id>[A-Za-z0-9.\-]+)"  # the student id
    r"(?:_LATE)?(?:_\d+)*_"             # Canvas: _LATE, user id, submission id
    r"(?P<file_id>[^/]+)$"              # the file or archive as the student named it
)

# ------------------------------------------------------------------ late work
# The late policy is the [late] table of each assignment's grading.toml (one place, public to the
# students; autograder/engine/lateness.py). nbgrader applies it at autograde from timestamp.txt
# (written by the guarded collect above from the exchange folder's name and ctime, never the
# student's own file, or by zip_collect's plugin above from an LMS download) and
# the due date recorded with `nbgrader db assignment add <assignment> --duedate=...`.
c.AssignLatePenalties.plugin_class = "autograder.nbgrader_bridge.late.CourseLatePenalty"

# `nbgrader export`: nbgrader's CSV with the scores rounded to 0.01 (its float sums print as 68.49000000000001).
c.ExportApp.plugin_class = "autograder.nbgrader_bridge.export.RoundedCsvExportPlugin"
