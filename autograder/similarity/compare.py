"""Pairwise similarity with copydetect, ranked pairs, the CSV and the HTML report.

copydetect tokenizes each text (names become V/F/O, strings S, comments go), fingerprints every
k-gram of the token stream and keeps a winnowed subset; the boilerplate's fingerprints are
removed first. For a pair (a, b), `share_a` is the part of a's remaining code also found in b,
`share_b` the converse. A pair is ranked by the larger share: a student who copied another's
functions and added code of their own still shows the victim's code fully contained.
Students who run packed code (sources.py) are marked in the CSV's `packed` column and listed at
the top of the report.
"""

from __future__ import annotations

import csv
import html
import io
import logging
import re
from dataclasses import dataclass
from pathlib import Path

NOISE_CHARS = 25          # shortest match (in tokenized characters) that can count: copydetect's default
_CDN = re.compile(r'\s*<(?:link|script)[^>]*https?://[^>]*>(?:</script>)?')
# What copydetect's template takes from Bootstrap, so the report needs no network to read.
_OFFLINE_CSS = """<style>
    body { font-family: sans-serif; margin: 1em; }
    .row, .d-flex { display: flex; gap: 1em; flex-wrap: wrap; }
    .col { flex: 1; min-width: 0; }
    .table { border-collapse: collapse; width: 100%; }
    .table td, .table th { border-top: 1px solid #ccc; padding: 0.3em; }
    .btn { display: none; }
    .card-body { border: 1px solid #ccc; padding: 0.5em; margin-bottom: 1em; }
    pre { white-space: pre-wrap; font-size: 12px; }
  </style>
"""


@dataclass(frozen=True)
class Pair:
    student_a: str
    student_b: str
    share_a: float          # fraction of a's (non-boilerplate) code found in b
    share_b: float          # fraction of b's code found in a
    overlap_tokens: int     # tokenized characters the two have in common

    @property
    def score(self) -> float:
        return max(self.share_a, self.share_b)


def _detector(files: list[Path], boilerplate: list[Path], out_file: Path):
    from copydetect import CopyDetector

    detector = CopyDetector(extensions=["py"], noise_t=NOISE_CHARS, guarantee_t=NOISE_CHARS,
                            display_t=0.0, autoopen=False, silent=True, out_file=str(out_file),
                            force_language="python")
    for path in files:
        detector.add_file(str(path))
    for path in boilerplate:
        detector.add_file(str(path), type="boilerplate")
    return detector


def compare_class(files: dict[str, Path], boilerplate: list[Path], report_file: Path):
    """(every pair, most similar first; the copydetect detector that holds the details)."""
    by_path = {str(path): student for student, path in files.items()}
    detector = _detector(list(files.values()), boilerplate, report_file)
    logging.getLogger().setLevel(max(logging.getLogger().level, logging.ERROR))  # copydetect logs to root
    if len(files) >= 2:
        detector.run()
    if detector.similarity_matrix.size == 0:
        return [], detector
    pairs = {}
    tests, refs = detector.test_files, detector.ref_files
    for i, test in enumerate(tests):
        for j, ref in enumerate(refs):
            if test == ref:
                continue
            a, b = sorted((by_path[test], by_path[ref]))
            share_test, share_ref = detector.similarity_matrix[i, j]
            if share_test < 0:
                continue                          # skipped by copydetect (unreadable)
            shares = (share_test, share_ref) if a == by_path[test] else (share_ref, share_test)
            pairs[a, b] = Pair(a, b, round(float(shares[0]), 4), round(float(shares[1]), 4),
                               int(detector.token_overlap_matrix[i, j]))
    ranked = sorted(pairs.values(), key=lambda p: (-p.score, -p.overlap_tokens, p.student_a, p.student_b))
    return ranked, detector


def packed_marker(pair: Pair, packed: dict) -> str:
    """e.g. 'mallory: packed code decoded' for the pair's students who run packed code."""
    return "; ".join(f"{s}: packed code {packed[s].status}" for s in (pair.student_a, pair.student_b) if s in packed)


def write_pairs_csv(path: Path, pairs: list[Pair], threshold: float, top: int | None = None,
                    packed: dict | None = None) -> None:
    """rank, student_a, student_b, score, share_a, share_b, overlap_tokens, flagged, packed."""
    packed = packed or {}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["rank", "student_a", "student_b", "score", "share_a", "share_b", "overlap_tokens", "flagged",
                     "packed"])
    for rank, pair in enumerate(pairs[:top] if top else pairs, 1):
        writer.writerow([rank, pair.student_a, pair.student_b, f"{pair.score:.3f}", f"{pair.share_a:.3f}",
                         f"{pair.share_b:.3f}", pair.overlap_tokens, "yes" if pair.score >= threshold else "",
                         packed_marker(pair, packed)])
    path.write_text(buf.getvalue(), encoding="utf-8")


def _packed_section(packed: dict) -> str:
    if not packed:
        return ""
    items = "".join(f"<li><b>{html.escape(student)}</b>: packed code {code.status}<ul>"
                    + "".join(f"<li>{html.escape(place)}</li>" for place in code.places) + "</ul></li>"
                    for student, code in sorted(packed.items()))
    return ('<div class="card-body" id="packed-code"><h2>Packed code</h2><p>These students run code from an '
            "encoded or compressed string. What could be decoded (read, never run) is compared after the file "
            f"it hides in; undecodable code is not compared at all: read it.</p><ul>{items}</ul></div>")


def write_report(detector, path: Path, packed: dict | None = None) -> None:
    """copydetect's HTML report (matched code highlighted side by side), made readable offline,
    with the students who run packed code listed first."""
    import matplotlib
    matplotlib.use("Agg")   # the report's two plots; no display needed
    page = detector.generate_html_report(output_mode="return") if detector.similarity_matrix.size else None
    if page is None:
        page = "<!DOCTYPE html><html><body><p>Fewer than two submissions: nothing to compare.</p></body></html>"
    page = _CDN.sub("", page).replace("</head>", _OFFLINE_CSS + "</head>", 1)
    page = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + _packed_section(packed or {}), page, count=1)
    path.write_text(page, encoding="utf-8")
