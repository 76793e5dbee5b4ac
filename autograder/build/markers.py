"""Solution regions of a reference file: the lines between `### BEGIN SOLUTION` and `### END SOLUTION`.

Like nbgrader's ClearSolutions, a malformed region stops the build instead of shipping half a
solution: a region that never ends, an end without a beginning, nested or misspelt markers, and
any hidden-test marker (hidden tests live only in autograder/<assignment>/) all raise MarkerError.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.errors import InstructorError

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
HIDDEN_TEST_MARKERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


class MarkerError(InstructorError):
    """A solution region is malformed; the message names the file and the line."""


@dataclass(frozen=True)
class SolutionRegion:
    begin: int  # 1-based line number of the BEGIN marker
    end: int  # 1-based line number of the END marker
    indent: str  # the markers' indentation: the replacement goes there
    body: tuple[str, ...]  # the solution lines between the markers


def find_regions(source: str, filename: str) -> tuple[SolutionRegion, ...]:
    """Every solution region of `source`, in order; MarkerError on anything malformed."""
    lines = source.splitlines()
    regions: list[SolutionRegion] = []
    open_at: int | None = None
    for number, line in enumerate(lines, 1):
        text = line.strip()
        upper = text.upper()
        where = f"{filename}:{number}"
        if any(marker in upper for marker in HIDDEN_TEST_MARKERS):
            raise MarkerError(f"{where}: hidden-test marker in a solution file; hidden tests belong in autograder/")
        if "BEGIN SOLUTION" in upper:
            _require_exact(text, BEGIN, where)
            if open_at is not None:
                raise MarkerError(f"{where}: nested begin solution statement "
                                  f"(the region opened at line {open_at} has no end solution statement)")
            open_at = number
        elif "END SOLUTION" in upper:
            _require_exact(text, END, where)
            if open_at is None:
                raise MarkerError(f"{where}: end solution statement without a begin solution statement")
            indent = _indent(lines[open_at - 1])
            if _indent(line) != indent:
                raise MarkerError(f"{where}: end solution statement indented differently from its begin at line {open_at}")
            body = tuple(lines[open_at:number - 1])
            if not any(b.strip() for b in body):
                raise MarkerError(f"{filename}:{open_at}: empty solution region")
            regions.append(SolutionRegion(open_at, number, indent, body))
            open_at = None
    if open_at is not None:
        raise MarkerError(f"{filename}:{open_at}: no end solution statement found")
    return tuple(regions)


def strip_marker_lines(source: str, filename: str) -> str:
    """The reference with its marker lines removed: what a student who solved everything would hand in."""
    marker_lines = {n for r in find_regions(source, filename) for n in (r.begin, r.end)}
    kept = [line for n, line in enumerate(source.splitlines(keepends=True), 1) if n not in marker_lines]
    return "".join(kept)


def _require_exact(text: str, marker: str, where: str) -> None:
    if text != marker:
        raise MarkerError(f"{where}: malformed marker {text!r}; write exactly {marker!r} on a line of its own")


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
