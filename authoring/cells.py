"""The vocabulary of a notebook source (solutions/<assignment>/<notebook stem>.py exposes `CELLS`).

A source lists what the notebook says; the build adds what grading.toml knows (titles, points,
answer format, tolerance) and the nbgrader metadata, and renders either the released notebook
(answer cells replaced by stubs) or the answered reference notebook.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


def _clean(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


@dataclass(frozen=True)
class Markdown:
    """Explanatory text; locked in the notebook (students answer in answer cells only)."""

    source: str

    def __post_init__(self):
        object.__setattr__(self, "source", _clean(self.source))


@dataclass(frozen=True)
class Code:
    """A code cell. Demo cells stay editable so students can experiment; `locked` ones (set-up) do not."""

    source: str
    locked: bool = False

    def __post_init__(self):
        object.__setattr__(self, "source", _clean(self.source))


@dataclass(frozen=True)
class FunctionCheck:
    """The grade cell of a function item: `check("<function>")`, with a heading from grading.toml."""

    function: str


@dataclass(frozen=True)
class Question:
    """A report question: prompt, answer cell, grade cell.

    `answer` is the reference answer: Python that assigns the variable `id` (number and choice
    items) or Markdown (text items). It appears only in the answered notebook.
    """

    id: str
    prompt: str
    answer: str

    def __post_init__(self):
        object.__setattr__(self, "prompt", _clean(self.prompt))
        object.__setattr__(self, "answer", _clean(self.answer))


Cell = Markdown | Code | FunctionCheck | Question
