"""The vocabulary of hidden tests: a call into the student's code, what it must do, and its weight.

An assignment's hidden-test package (autograder/<assignment>/) builds these in the trusted
parent process, with expected values computed by the reference. The engine sends only the
`Call` to the sandbox and judges the plain data that comes back with the expectation's check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Mapping, Protocol

import numpy as np


class Group(Enum):
    """A kind of hidden test: its Chinese label (shown in feedback as 【label】) and its default
    weight in partial credit. The engine knows no groups of its own beyond `Standard`; an
    assignment declares others as a subclass, e.g. `class Groups(Group): SHAPES = ("矩阵形状", 1.5)`."""

    def __init__(self, label: str, weight: float):
        self.label = label
        self.weight = weight


class Standard(Group):
    """Groups every assignment can use."""

    DATA = ("分布", 1.0)  # seeded data from one distribution
    BOUNDARY = ("边界", 2.0)  # ties, every representable value, saturation: the point of an exercise
    BAD_INPUT = ("错误输入", 0.5)  # must raise
    PROPERTY = ("性质", 2.0)  # a hypothesis property (many generated examples, one verdict)

INLINE_ARRAY_MAX = 4  # arrays up to this size are written out in a rendered call; larger ones are `x`
LONG_INT_BITS = 100  # integers longer than this are described, not written out (the wire allows 4000 bits)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    message: str = ""  # Chinese Markdown explaining the failure; empty when ok


@dataclass(frozen=True)
class TestRecord:
    """One graded test of an item (a seeded case or a whole property) and its verdict."""

    __test__ = False  # not a pytest test class, whatever its name

    label: str
    group: Group
    weight: float
    verdict: Verdict
    expects_raise: bool = False  # a "must raise" case rather than a value test
    input_is_answer: bool = False  # the call's input, returned as given, passes it (a stub's value)


class Check(Protocol):
    """`reveal=False`: the failure message must not contain the expected value."""

    def __call__(self, actual: Any, what: str, *, reveal: bool = True) -> Verdict: ...


@dataclass(frozen=True)
class Call:
    """One call of a student function with plain arguments (numbers, strings, arrays) or values the
    sandbox rebuilds from a description; those show themselves in feedback by their `label`."""

    function: str
    args: tuple = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        """The call as a student would write it, e.g. `scale(x, 2.5)`."""
        parts = [render_arg(a) for a in self.args]
        parts += [f"{k}={render_arg(v)}" for k, v in self.kwargs.items()]
        return f"{self.function}({', '.join(parts)})"


def render_arg(value: Any) -> str:
    label = getattr(value, "label", None)  # a value rebuilt in the sandbox says how to show itself
    if isinstance(label, str) and label:
        return label
    if isinstance(value, np.ndarray):
        if value.size <= INLINE_ARRAY_MAX and value.ndim == 1:
            return "np.array([" + ", ".join(render_number(v) for v in value) + "])"
        return "x"
    if isinstance(value, (float, np.floating)):
        return render_number(value)
    return repr(value)


def render_number(value: Any) -> str:
    """Shortest round-trip form of a number (0.75, 1e-300, 448.0); anything else by repr."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return repr(value)
    if isinstance(value, (int, np.integer)):
        bits = int(value).bit_length()
        if bits > LONG_INT_BITS:
            beyond = "，超出 float64 的范围" if bits > 1024 else ""
            return f"一个 {bits} 位二进制的整数（约 {'-' if value < 0 else ''}2^{bits - 1}{beyond}）"
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return repr(value)


@dataclass(frozen=True)
class Returns:
    """The call must return a value that `check` accepts (check holds the reference's answer)."""

    check: Check


@dataclass(frozen=True)
class Raises:
    """The call must raise `exc_type` (matched by class name; the parent never sees the object)."""

    exc_type: str
    reason: str  # Chinese: why it must raise, e.g. "x 含 NaN"


Expectation = Returns | Raises


@dataclass(frozen=True)
class Case:
    """One seeded call and its expectation."""

    label: str  # Chinese description of the input, e.g. "Student-t（df = 5）× 0.02，4096 个值"
    call: Call
    expect: Expectation
    group: Group = Standard.DATA
    weight: float | None = None  # None: the group's default weight
    # False when the expected value is itself an answer key (e.g. a report question's number):
    # a failure then says the value is wrong without showing the expected one.
    reveal_expected: bool = True

    @property
    def points_weight(self) -> float:
        return self.group.weight if self.weight is None else self.weight


@dataclass(frozen=True)
class Property:
    """A hypothesis property: for every drawn argument tuple the student must match the reference.

    `strategy` draws the argument tuple in the parent; `expect(args)` gives the expectation (the
    reference runs in the parent); `hint(args)` may add a Chinese remark about a counterexample,
    e.g. "（平局取偶数 ties to even）".
    """

    label: str
    function: str
    strategy: Any  # hypothesis SearchStrategy[tuple]
    expect: Callable[[tuple], Expectation]
    max_examples: int = 60
    hint: Callable[[tuple], str] | None = None
    group: Group = Standard.PROPERTY
    weight: float | None = None
    # The fixed examples the score is decided on, read from the assignment's property_examples.json
    # by load_assignment (never drawn while grading: see engine/property_examples.py).
    examples: tuple[tuple, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def points_weight(self) -> float:
        return self.group.weight if self.weight is None else self.weight


@dataclass(frozen=True)
class Suite:
    """Everything the hidden tests check for one function item."""

    function: str
    summary: str  # Chinese, one line: what was tested
    cases: tuple[Case, ...]
    properties: tuple[Property, ...] = ()

    def __post_init__(self):
        for case in self.cases:
            if not isinstance(case.group, Group):
                raise ValueError(f"{self.function}: case {case.label!r} has unknown group {case.group!r}")
            if case.call.function != self.function:
                raise ValueError(f"{self.function}: case {case.label!r} calls {case.call.function}")
        if not self.cases and not self.properties:
            raise ValueError(f"{self.function}: a suite needs at least one case or property")
