"""What grading one submission produces: frozen, plain, JSON-able.

Score convention: `score` counts the points the grader awarded automatically; `max_score` is the
assignment's total, manual (free-text) items included, so it matches nbgrader's gradebook before
a TA grades the free text. `auto_max_score` is the part the grader can award by itself.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:   # imported where needed: see lateness.py on what a hidden-test draw imports
    from autograder.engine.lateness import Lateness

ItemStatus = Literal["passed", "failed", "partial", "manual", "error"]
ITEM_STATUSES = ("passed", "failed", "partial", "manual", "error")


@dataclass(frozen=True)
class ItemResult:
    """The grade of one item of grading.toml (a function or a report question)."""

    id: str
    kind: str  # function | number | choice | text
    score: float
    max_score: float
    status: ItemStatus
    feedback_md: str  # Chinese Markdown shown to the student
    output: str = ""  # the student's captured stdout/stderr while this item ran (truncated)
    title: str = ""
    # Number and choice items: the submitted value, JSON-plain (report_items.recorded_answer), kept
    # so the class's answers can be compared with other keys without grading again. None for
    # function and text items, and in results written before answers were recorded.
    answer: dict | None = None

    def __post_init__(self):
        if self.status not in ITEM_STATUSES:
            raise ValueError(f"item {self.id}: unknown status {self.status!r}; expected one of {ITEM_STATUSES}")
        if not 0 <= self.score <= self.max_score:
            raise ValueError(f"item {self.id}: score {self.score} outside [0, {self.max_score}]")


@dataclass(frozen=True)
class SubmissionResult:
    """The grade of one student's submission."""

    student: str
    score: float
    max_score: float
    items: tuple[ItemResult, ...]
    isolation: str  # confinement.py's name: bubblewrap, rlimits, or none (nothing of the student's ever ran)
    seconds: float
    assignment: str = ""
    fingerprint: str = ""  # hash of the graded files + grading config: a re-run skips unchanged work
    case_set: str = ""  # digest of the hidden cases and property examples graded against (case_digest.py)
    late: Lateness | None = None  # submission time vs due date under the late policy (lateness.py)
    # How the sandbox's memory, processes and CPU were bounded: "cgroup v1", "cgroup v2",
    # "cgroup v2 (delegated)" or "rlimits" ("" when nothing of the student's ran, or an older result).
    quotas: str = ""
    # Per-student variants (autograder/engine/variants.py): the id the submission was graded as, where
    # that id came from ("folder": the submission folder's name, as `grade` and nbgrader collect it;
    # "gradescope sid" / "gradescope email": submission_metadata.json), the digest of its variant's
    # parameters, the STUDENT_ID the notebook itself declared, and what an instructor should look at
    # (e.g. a notebook declaring another student's id). All empty for an assignment without variants.
    student_id: str = ""
    student_id_source: str = ""
    variant: str = ""
    declared_id: str = ""
    flags: tuple[str, ...] = ()
    # The executed notebook (executed_notebook.py): each code cell's outputs from the grader's one
    # run of it. Kept beside the result (outputs.py), not in it: it is for the feedback, not a grade.
    executed: dict | None = field(default=None, compare=False, repr=False)
    # The rest of the confinement that graded it, on whichever machine that was (a cluster's
    # worker): whether the sandbox's /tmp and /dev/shm were its own, and whether it ran on CPUs
    # of its own (placement.py). None when nothing of the student's ran, or an older result.
    # Not part of the grade: equal results may come from differently placed sandboxes.
    private_scratch: bool | None = field(default=None, compare=False)
    # How the total the sandbox wrote was capped (sandbox/disk_budget.py): "tmpfs" (bubblewrap's, or
    # the uid fallback's own where it could make a mount namespace) or "watchdog" (the grader measured
    # its writes and would stop it past the budget); None as for private_scratch.
    disk_cap: str | None = field(default=None, compare=False)
    placed: bool | None = field(default=None, compare=False)
    # Whether the sandbox had a network and an IPC namespace of its own (bubblewrap always; the uid
    # fallback where the platform allows: without them it shared the host's ports and SysV tables),
    # and a /proc showing only its own processes (without it, the host's command lines were readable).
    own_network: bool | None = field(default=None, compare=False)
    own_ipc: bool | None = field(default=None, compare=False)
    own_proc: bool | None = field(default=None, compare=False)
    # The grading machine's reference measurement the measured items were judged against
    # (reference_measurement.py: figures, when, which grader process), shared by every submission
    # that process graded. Staff-side only: feedback never shows it. None when none was needed.
    reference: dict | None = field(default=None, compare=False)
    # A second reference, taken right after the notebook when one of the student's measurements
    # disagreed with the first (the machine may have slowed or sped up since): its record, with
    # "used" saying whether the report was judged against it (it scored higher). None otherwise.
    reference_again: dict | None = field(default=None, compare=False)

    @property
    def auto_max_score(self) -> float:
        """Points the grader can award by itself (everything but manually graded items)."""
        return round(sum(item.max_score for item in self.items if item.status != "manual"), 6)

    @property
    def late_penalty(self) -> float:
        """Points the late policy takes off `score` (0 when on time or unknown)."""
        return self.late.penalty if self.late is not None else 0.0

    @property
    def manual_items(self) -> tuple[ItemResult, ...]:
        return tuple(item for item in self.items if item.status == "manual")

    def item(self, item_id: str) -> ItemResult:
        for item in self.items:
            if item.id == item_id:
                return item
        raise KeyError(f"{self.student}: no item {item_id!r}")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("executed")
        d["items"] = [asdict(item) for item in self.items]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SubmissionResult:
        items = tuple(ItemResult(**item) for item in d["items"])
        from autograder.engine.lateness import Lateness

        late = Lateness(**d["late"]) if d.get("late") else None
        return cls(**{**d, "items": items, "late": late, "flags": tuple(d.get("flags", ()))})
