"""The similarity report (report.html): one offline page an instructor opens in their browser.

Everything on it that a student chose (folder names, code, what their packed code was decoded
from) is escaped here, where it is quoted into HTML: a folder named `<img src=x onerror=…>` is
text. The page holds no script and loads nothing. Sections: the students who run packed code;
what of a student's code could not be compared; each student's share of the reference (a
student who handed in the reference itself shows here, not as a pair); the matrix of pair scores
labelled by name; and the most similar pairs with their matched code highlighted side by side.
"""

from __future__ import annotations

import html
from pathlib import Path

from autograder.engine.outputs import utf8_text

MAX_SHOWN_PAIRS = 30      # pairs whose code the page shows (flagged pairs always): pairs.csv has all
# A share of the reference at or above this is pointed out (a verbatim copy scores 1.00; honest code
# written from the docstrings 0.62-0.89 in tests/similarity/honest/): a reason to read, never a flag.
REFERENCE_NOTE = 0.95

_STYLE = """<style>
  body { font-family: sans-serif; margin: 1em 2em; }
  table { border-collapse: collapse; }
  td, th { border: 1px solid #ccc; padding: 0.2em 0.4em; text-align: right; }
  th { text-align: left; white-space: nowrap; }
  td.flagged { font-weight: bold; outline: 2px solid #c00; }
  .pair { border: 1px solid #ccc; padding: 0.5em; margin: 1em 0; }
  .side { display: flex; gap: 1em; }
  .side > div { flex: 1; min-width: 0; }
  pre { white-space: pre-wrap; font-size: 12px; background: #fafafa; }
  .highlight-red { background-color: #f2b6b6; }
  .highlight-green { background-color: #b6f2b6; }
</style>"""


def e(text) -> str:
    """`text` quoted into the page: HTML-escaped, and a name's bytes that are no UTF-8 as \\xNN."""
    return html.escape(utf8_text(str(text)), quote=True)


def _shade(score: float) -> str:
    """A cell background from white (0) to red (1): a fixed style, never student text."""
    level = int(255 - 120 * max(0.0, min(score, 1.0)))
    return f"background-color: rgb(255,{level},{level})"


def _matrix(students: list[str], pairs, threshold: float) -> str:
    scores = {(p.student_a, p.student_b): p.score for p in pairs}
    head = "".join(f"<th>{e(s)}</th>" for s in students)
    rows = []
    for a in students:
        cells = []
        for b in students:
            score = scores.get((a, b), scores.get((b, a)))
            if a == b or score is None:
                cells.append("<td></td>")
                continue
            mark = ' class="flagged"' if score >= threshold else ""
            cells.append(f'<td{mark} style="{_shade(score)}">{score:.2f}</td>')
        rows.append(f"<tr><th>{e(a)}</th>{''.join(cells)}</tr>")
    return (f'<h2>Matrix</h2><p>Score of each pair (the larger share of one student\'s own code found in the '
            f'other\'s); outlined: at or above {threshold:g}.</p>'
            f'<table id="matrix"><tr><th></th>{head}</tr>{"".join(rows)}</table>')


def _highlighted(code: str, slices, css: str) -> str:
    """The code with the matched spans marked; every character of it escaped."""
    from copydetect.utils import highlight_overlap

    if slices is None or slices.shape[1] == 0:
        return e(code)              # copydetect returns the code unescaped when nothing matched
    marked, _ = highlight_overlap(code, slices, f"<span class='{css}'>", "</span>", escape_html=True)
    return marked


def _pair_section(pair, files: dict[str, Path], detector, threshold: float) -> str:
    path_a, path_b = str(files[pair.student_a]), str(files[pair.student_b])
    if (path_a, path_b) in detector.slice_matrix:
        slices_a, slices_b = detector.slice_matrix[(path_a, path_b)]
    elif (path_b, path_a) in detector.slice_matrix:
        slices_b, slices_a = detector.slice_matrix[(path_b, path_a)]
    else:
        slices_a = slices_b = None
    code_a = _highlighted(detector.file_data[path_a].raw_code, slices_a, "highlight-red")
    code_b = _highlighted(detector.file_data[path_b].raw_code, slices_b, "highlight-green")
    flag = " FLAGGED" if pair.score >= threshold else ""
    return (f'<div class="pair"><h3>{e(pair.student_a)} ~ {e(pair.student_b)}: {pair.score:.2f}{flag}</h3>'
            f"<p>{pair.share_a:.0%} of {e(pair.student_a)}'s own code is found in {e(pair.student_b)}'s; "
            f"{pair.share_b:.0%} the other way; {pair.overlap_tokens} tokenized characters in common.</p>"
            f'<div class="side"><div><b>{e(pair.student_a)}</b><pre>{code_a}</pre></div>'
            f'<div><b>{e(pair.student_b)}</b><pre>{code_b}</pre></div></div></div>')


def _packed_section(packed: dict) -> str:
    if not packed:
        return ""
    items = "".join(f"<li><b>{e(student)}</b>: packed code {e(code.status)}<ul>"
                    + "".join(f"<li>{e(place)}</li>" for place in code.places) + "</ul></li>"
                    for student, code in sorted(packed.items()))
    return ('<div id="packed-code"><h2>Packed code</h2><p>These students run code from an '
            "encoded or compressed string. What could be decoded (read, never run) is compared after the file "
            f"it hides in; undecodable code is not compared at all: read it.</p><ul>{items}</ul></div>")


def _notes_section(notes: dict[str, str]) -> str:
    if not notes:
        return ""
    items = "".join(f"<li><b>{e(student)}</b>: {e(note)}</li>" for student, note in sorted(notes.items()))
    return f'<div id="notes"><h2>Not compared in full</h2><ul>{items}</ul></div>'


def _reference_section(shares: dict[str, float]) -> str:
    if not shares:
        return ""
    rows = "".join(f"<tr><th>{e(s)}</th><td>{share:.2f}{' (nearly all of it: read it)' if share >= REFERENCE_NOTE else ''}"
                   f"</td></tr>" for s, share in sorted(shares.items(), key=lambda kv: (-kv[1], kv[0])))
    return ('<div id="reference"><h2>Share of the reference</h2><p>What the docstrings prescribe, honest code '
            "also writes: pairs are scored beyond the reference, and this is each student's own code found in "
            f"it (not a sign of copying below {REFERENCE_NOTE:g}).</p><table>{rows}</table></div>")


def report_html(*, assignment: str, files: dict[str, Path], pairs, detector, threshold: float,
                packed: dict | None = None, notes: dict[str, str] | None = None,
                reference: dict[str, float] | None = None) -> str:
    students = sorted(files)
    flagged = [p for p in pairs if p.score >= threshold]
    shown = flagged + [p for p in pairs if p.score < threshold and p.score > 0][:max(0, MAX_SHOWN_PAIRS - len(flagged))]
    body = [f"<h1>Code similarity: {e(assignment)}</h1>",
            f"<p>{len(students)} submissions, {len(pairs)} pairs; {len(flagged)} at or above {threshold:g}.</p>",
            _packed_section(packed or {}), _notes_section(notes or {}), _reference_section(reference or {})]
    if len(students) < 2:
        body.append("<p>Fewer than two submissions: nothing to compare.</p>")
    else:
        body.append(_matrix(students, pairs, threshold))
        body.append(f"<h2>Most similar pairs</h2><p>{len(shown)} of {len(pairs)} (all in pairs.csv).</p>")
        body += [_pair_section(pair, files, detector, threshold) for pair in shown]
    return ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f"<title>Code similarity: {e(assignment)}</title>{_STYLE}</head><body>"
            + "".join(body) + "</body></html>")


def write_report(path: Path, **kwargs) -> None:
    path.write_text(report_html(**kwargs), encoding="utf-8")
