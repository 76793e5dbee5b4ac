"""The HTML nbconvert renders for nbgrader's pages (feedback, formgrader), made inert.

A student's notebook reaches pages that instructors open in their own Jupyter session: their
markdown answer cells, their cells' HTML/Markdown outputs, and the grade cells' explanations
(which quote their answers). nbconvert's `sanitize_html` cleans outputs only, with an allowlist
so short that headings, paragraphs and tables turn into visible tags; and nbgrader's feedback and
formgrade templates render markdown cells with no cleaning at all. nbgrader_config.py replaces
both filters with these two: every piece of markdown and HTML is cleaned the same way, keeping
the formatting and dropping scripts, event handlers, links (but a heading's own anchor), forms and frames.
Nothing in it loads from anywhere when the page opens: an image is kept only inline (a `data:`
PNG, JPEG or GIF, as notebook attachments and plots are), and no CSS property that takes a URL is
kept. A remote image or cursor would tell its author when a TA opened the page and from where; a
relative one is a GET to the hub with the TA's cookies.
Nor does anything in it change the page's layout beyond its own text: inline CSS keeps colours,
weights, alignment and decoration only (no size, display, float, spacing or offset: an element
100,000 px high, or floated out of its cell, would push the next item's score box off the TA's
screen), no `align` but a table cell's (on a table or image it floats), and every image is bounded
to its cell's width and 40 lines' height. Whatever still sizes an answer or output (its own length,
TeX) stays inside its cell: the pages bound each cell's rendered text and output (CELL_BOUNDS, set
in templates/base/mathjax.html.j2, which both pages load in their head).
"""

from __future__ import annotations

import html
import re
import threading
from functools import cache

import bleach
from pygments.token import STANDARD_TYPES
from bleach.css_sanitizer import CSSSanitizer
from bleach.html5lib_shim import Filter
from bleach.sanitizer import Cleaner
from jinja2 import pass_context

from autograder.nbgrader_bridge.highlight_budget import MOST_SHOWN_PAGE, markup_budget, page_budget, shown_budget

TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "samp", "span",
    "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
})
# No id: formgrader binds each score box by the first element with its grade id, and an answer's
# element (or its heading's anchor) with a later cell's grade id would take that score.
# No align but a table cell's: on a table, image or block it is a float (`<table align=left>` floated
# out of its output, the next panel wrapped round it and formgrader's score box moved sideways).
_COMMON = {"title", "style"}
# A class is kept only when every name in it is one the renderers themselves write (code
# highlighting, heading anchors, pandas tables): the pages carry Bootstrap's stylesheet, whose
# classes (.modal-backdrop, .dropdown-backdrop, .navbar-fixed-top) would pin a student's element
# over the TA's whole page.
_RENDERER_CLASSES = frozenset(STANDARD_TYPES.values()) | {"highlight", "anchor-link", "dataframe"}
_RENDERER_CLASS_PREFIXES = ("hl-", "language-")
_CELL = _COMMON | {"colspan", "rowspan", "align"}
PROTOCOLS = frozenset({"http", "https", "mailto", "data"})   # data: only for images, see _allowed
INLINE_IMAGES = ("data:image/png", "data:image/jpeg", "data:image/gif")
# No property that takes a URL (cursor: url(...) loads) nor one that sizes, moves or re-flows an
# element (height, width, display, float, clear, overflow, font-size, line-height, letter-spacing,
# text-indent, vertical-align, white-space, direction…): what the renderers themselves write inline
# (a table column's text-align) and the colours a student may use stay.
CSS_PROPERTIES = frozenset({
    "color", "background-color", "border-collapse", "border-color", "border-top-color",
    "border-right-color", "border-bottom-color", "border-left-color", "font-style", "font-weight",
    "font-family", "text-align", "text-decoration",
})
_CSS = CSSSanitizer(allowed_css_properties=CSS_PROPERTIES)
# Every image, whatever it says of its size (attributes, or a data: PNG 100,000 px high).
IMAGE_BOUNDS = "max-width: 100%; max-height: 40em; height: auto"


def _allowed(tag: str, name: str, value: str) -> bool:
    if name == "class":
        return all(c in _RENDERER_CLASSES or c.startswith(_RENDERER_CLASS_PREFIXES) for c in value.split())
    if name in (_CELL if tag in ("td", "th") else _COMMON):
        return True
    if tag == "a" and name == "href":
        # Only a heading's own anchor: a student's link would open their site from the TA's
        # session (and name the page's address to it); the link's text stays.
        return value.strip().startswith("#")
    if tag == "img" and name == "src":
        return value.strip().lower().startswith(INLINE_IMAGES)
    return tag == "img" and name in ("alt", "width", "height")


class _BoundedImages(Filter):
    """Gives every <img> IMAGE_BOUNDS as its only style."""

    def __iter__(self):
        for token in super().__iter__():
            if token["type"] in ("StartTag", "EmptyTag") and token["name"] == "img":
                data = {key: value for key, value in token["data"].items() if key[1] != "style"}
                token = {**token, "data": {**data, (None, "style"): IMAGE_BOUNDS}}
            yield token


# One Cleaner per thread: its HTML parser keeps state while it cleans (bleach: "not thread-safe"),
# and with one for the process two pages cleaned at once in two threads got each other's text. It
# keeps nothing of a page between two cleanings, so a thread's own is enough.
_THREADS = threading.local()


def _cleaner() -> Cleaner:
    cleaner = getattr(_THREADS, "cleaner", None)
    if cleaner is None:
        cleaner = _THREADS.cleaner = Cleaner(tags=TAGS, attributes=_allowed, protocols=PROTOCOLS, css_sanitizer=_CSS,
                                             strip=False, strip_comments=True, filters=[_BoundedImages])
    return cleaner


def clean_html(element) -> str:
    """HTML with only formatting left: the allowlisted tags and attributes; a link keeps its text only."""
    text = element.decode() if isinstance(element, bytes) else str(element)
    return _cleaner().clean(text)


@pass_context
def clean_cell_html(context, element) -> str:
    """`clean_html` as the pages' filter: a raw cell's own HTML and a cell's HTML output (a student's)
    are cleaned within the page's markup budget, else shown as the text they are."""
    if isinstance(element, Highlighted):
        return element
    if _own_text_beyond_budget(context, element):
        return _as_text(context, element)
    return clean_html(element)


@pass_context
def markdown2html(context, source: str) -> str:
    """nbconvert's Markdown rendering (math, attachments, anchors), then `clean_html`. A student's
    Markdown (a cell's own, an output's) beyond the page's markup budget is shown as the text it is."""
    from nbconvert.filters.markdown_mistune import MarkdownWithMath

    if _own_text_beyond_budget(context, source):
        return _as_text(context, source)
    cell = context.get("cell", {})
    renderer = _renderer()(escape=False, allow_harmful_protocols=False, attachments=cell.get("attachments", {}))
    renderer.take = page_budget(context).take   # the page's, for its fenced blocks
    return clean_html(MarkdownWithMath(renderer=renderer).render(source))


def _own_text_beyond_budget(context, text) -> bool:
    """Whether `text` is a student's (a Markdown or raw cell's own source, or an output of any cell but
    the release's grade cells, whose outputs are the grader's explanations) and the page's markup
    budget has no room for it."""
    cell = context.get("cell") if context is not None else None
    text = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    if not isinstance(cell, dict) or not isinstance(text, str):
        return False
    output = context.get("output")
    if isinstance(output, dict) and _holds(output.get("data"), text):
        if _grade_cell(cell):
            return False
    elif not (cell.get("cell_type") in ("markdown", "raw") and _holds({"source": cell.get("source")}, text)):
        return False
    return not markup_budget(context).take(len(text))


def _holds(data, text: str) -> bool:
    return isinstance(data, dict) and any(v is text or v == text for v in data.values() if isinstance(v, str))


def _nbgrader_metadata(cell) -> dict:
    """nbgrader's metadata of a cell being rendered ({} when it has none, or a student made it no dict)."""
    metadata = cell.get("metadata") if isinstance(cell, dict) else None
    meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    return meta if isinstance(meta, dict) else {}


def _locked(context) -> bool:
    """Whether the cell being rendered is a locked cell of the release (autograde restores its source)."""
    cell = context.get("cell") if context is not None else None
    return _nbgrader_metadata(cell).get("locked") is True


def _grade_cell(cell) -> bool:
    """One of the release's grade cells (after autograde only those keep nbgrader's grade mark)."""
    meta = _nbgrader_metadata(cell)
    return meta.get("grade") is True and not meta.get("solution")


def _as_text(context, text) -> str:
    """Text shown as written: escaped, in a block that keeps its lines (linear, whatever it holds), as
    much of it as the page shows."""
    text = text.decode(errors="replace") if isinstance(text, bytes) else str(text)
    shown, more = _within_shown(context, text)
    return f"<pre>{html.escape(shown)}</pre>" + (f"<p>{html.escape(more)}</p>" if more else "")


NOT_SHOWN = "（此处另有 {count} 个字符未在本页显示：一页最多显示 {most} 个字符。笔记本本身保留了它们。）"


def _within_shown(context, text: str) -> tuple[str, str]:
    """(the part of `text` the page's shown budget allows, and the note for the rest or "")."""
    room = shown_budget(context).take_up_to(len(text))
    if room == len(text):
        return text, ""
    return text[:room], NOT_SHOWN.format(count=len(text) - room, most=MOST_SHOWN_PAGE)


_ATTACHMENT = "attachment:"


@cache
def _renderer():
    """nbconvert's IPythonRenderer, for which an image the cell holds no attachment for is no error:
    a missing name (InvalidNotebook) or an empty bundle (StopIteration) stopped the whole page, and
    generate_feedback and formgrader's view of that student with it. Such an image keeps its
    `attachment:` address, which clean_html drops as it drops any address it does not allow."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer

    class Renderer(IPythonRenderer):
        def _embed_image_or_attachment(self, src: str) -> str:
            if src.startswith(_ATTACHMENT):
                attachments = self.attachments if isinstance(self.attachments, dict) else {}
                bundle = attachments.get(src[len(_ATTACHMENT):])
                if not (isinstance(bundle, dict) and bundle and all(isinstance(v, str) for v in bundle.values())):
                    return src
            return super()._embed_image_or_attachment(src)

        def block_code(self, code: str, info: str | None = None) -> str:
            """A fenced block: highlighted as the course's Python when it says it is Python and the
            page's budget allows, else plain (never with a lexer the student names)."""
            words = (info or "").split()
            take = getattr(self, "take", None)
            if words and words[0].lower() in _PYTHON_NAMES and take is not None and take(len(code)):
                return super().block_code(code, info=COURSE_LEXER)
            if words and words[0].lower() == PLAIN_LEXER:   # the explanations' output blocks: one token, linear
                return super().block_code(code, info=PLAIN_LEXER)
            return super(IPythonRenderer, self).block_code(code, info=None)

    return Renderer



# Every notebook of the course is Python: its code is highlighted with Pygments' python lexer, whatever
# the notebook says. nbconvert takes the lexer from the notebook's own `language_info` (pygments_lexer,
# else name) and a cell's `magics_language`, and writes that language into the class of every code
# cell's input (`highlight hl-<language>`, escaped for quotes only): a student's notebook naming
# `ipython3 modal-backdrop` laid a code cell, fixed, over the TA's whole page. A fenced block in a
# student's Markdown is highlighted only when it says it is Python, with the same lexer.
COURSE_LEXER = "python"        # what the release's notebooks name (language_info.name)
PLAIN_LEXER = "text"           # one token: linear, whatever the text
_PYTHON_NAMES = frozenset({"python", "python3", "py", "py3", "ipython", "ipython3"})
# How much of it a page highlights, and why it is bounded at all: highlight_budget.py.


@pass_context
def highlight_code(context, source: str, language: str | None = None, metadata: object = None) -> str:
    """nbconvert's `highlight_code` for a code cell, with the course's lexer and class only, within
    the page's budget (else as plain text)."""
    more = ""
    if not _locked(context):        # the release's own cells (restored by autograde) are always shown
        source, more = _within_shown(context, source)
    lexer = COURSE_LEXER if page_budget(context).take(len(source)) else PLAIN_LEXER
    return Highlighted(_highlighter()(source, lexer, None) + (f"<p>{html.escape(more)}</p>" if more else ""))


class Highlighted(str):
    """What Pygments made of a code cell with the course's lexer (and the escaped note after it):
    every character of the source escaped, every class a token type's. The page's template cleans it
    again (`| clean_html`), which cost 1.3 s of CPU a MB of a cell's markup-like text (bleach reads
    every entity) and is skipped."""


@cache
def _highlighter():
    from nbconvert.filters.highlight import Highlight2HTML

    return Highlight2HTML(pygments_lexer=COURSE_LEXER)

_TAG_CHARACTERS = re.compile(r"[^A-Za-z0-9_-]")
MOST_TAGS, TAG_LENGTH = 20, 40


def cell_tag_classes(tags: object) -> str:
    """A cell's tags as class tokens of the cell's wrapper (templates/base/celltags.j2): ` celltag_<tag>`
    each, every character but letters, digits, '_' and '-' made '-', so that no tag is two classes
    or leaves the attribute; nothing for tags that are not a list of strings."""
    if not isinstance(tags, list):
        return ""
    return "".join(f" celltag_{_TAG_CHARACTERS.sub('-', tag[:TAG_LENGTH])}"
                   for tag in tags[:MOST_TAGS] if isinstance(tag, str))
