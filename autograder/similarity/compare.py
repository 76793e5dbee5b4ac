"""Pairwise similarity with copydetect, ranked pairs, the CSV and the HTML report.

copydetect tokenizes each text (names become V/F/O, strings S, comments go), fingerprints every
k-gram of the token stream and keeps a winnowed subset; the boilerplate's fingerprints are
removed first. For a pair (a, b), `share_a` is the part of a's remaining code also found in b,
`share_b` the converse. A pair is ranked by the larger share: a student who copied another's
functions and added code of their own still shows the victim's code fully contained.
Students who run packed code (sources.py) are marked in the CSV's `packed` column and listed at
the top of the report (report.py).
"""

from __future__ import annotations

import csv
import io
import logging
from dataclasses import dataclass
from pathlib import Path

from autograder.engine.outputs import csv_cell, student_cell

NOISE_CHARS = 25          # shortest match (in tokenized characters) that can count: copydetect's default


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


def _detector(files: list[Path], boilerplate: list[Path], kind: str = "testref"):
    from copydetect import CopyDetector

    detector = CopyDetector(extensions=["py"], noise_t=NOISE_CHARS, guarantee_t=NOISE_CHARS,
                            display_t=0.0, autoopen=False, silent=True, force_language="python")
    for path in files:
        detector.add_file(str(path), type=kind)
    for path in boilerplate:
        detector.add_file(str(path), type="boilerplate")
    logging.getLogger().setLevel(max(logging.getLogger().level, logging.ERROR))  # copydetect logs to root
    return detector


def reference_shares(files: dict[str, Path], boilerplate) -> dict[str, float]:
    """student -> the share of their own code (beyond what they received) found in the reference.
    Not a pair's evidence (honest code converges on the reference: 0.6-0.7 is common); near 1.0
    it says the student handed in the reference itself, which no classmate's code can show."""
    if not files:
        return {}
    detector = _detector(list(files.values()), boilerplate.released, kind="test")
    detector.add_file(str(boilerplate.reference_text), type="ref")
    detector.run()
    by_path = {str(path): student for student, path in files.items()}
    return {by_path[test]: round(max(float(detector.similarity_matrix[i, 0, 0]), 0.0), 4)
            for i, test in enumerate(detector.test_files)}


def compare_class(files: dict[str, Path], boilerplate: list[Path]):
    """(every pair, most similar first; the copydetect detector that holds the details).
    `boilerplate`: what every student received and what every student is told to write."""
    by_path = {str(path): student for student, path in files.items()}
    detector = _detector(list(files.values()), boilerplate)
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
    # a folder name is no spreadsheet formula, and no two folder names give the same cell
    for rank, pair in enumerate(pairs[:top] if top else pairs, 1):
        writer.writerow([rank, student_cell(pair.student_a), student_cell(pair.student_b), f"{pair.score:.3f}", f"{pair.share_a:.3f}",
                         f"{pair.share_b:.3f}", pair.overlap_tokens, "yes" if pair.score >= threshold else "",
                         csv_cell(packed_marker(pair, packed))])
    path.write_text(buf.getvalue(), encoding="utf-8")
