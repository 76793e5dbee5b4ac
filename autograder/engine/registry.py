"""The item registry: the repository's own `assignments/<name>/grading.toml`, never a student's copy."""

from __future__ import annotations

import difflib
import hashlib
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from autograder.errors import InstructorError
from autograder.engine.vocabulary import DEMANDS_OF_KIND, Demand, ItemKind

REPO_ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS_DIR = REPO_ROOT / "assignments"


class ConfigError(InstructorError):
    """The assignment's configuration is missing or malformed (an instructor's problem, not a student's)."""


# Every key grading.toml may hold: a misspelt or invented one (`total_points`, `weight`) would
# otherwise be ignored without a word. `plausible` is read by the students' selfcheck.py; the
# [late] table by autograder/engine/lateness.py, which checks its own keys.
TOP_LEVEL_KEYS = ("assignment", "items", "late", "shared_modules", "student_files")
ITEM_KEYS = ("atol", "choices", "demand", "id", "kind", "plausible", "points", "rtol", "title", "unit")


def unknown_key_problems(table: dict, valid: tuple[str, ...], where: str) -> list[str]:
    """One line per key of `table` not in `valid`, naming the nearest valid key when one is close."""
    problems = []
    for key in sorted(set(table) - set(valid)):
        near = difflib.get_close_matches(key, valid)  # best first; difflib's own similarity cutoff
        hint = f"did you mean {near[0]!r}? " if near else ""
        problems.append(f"{where}: unknown key {key!r} ({hint}valid keys: {', '.join(valid)})")
    return problems


@dataclass(frozen=True)
class Item:
    id: str
    kind: ItemKind
    points: float
    title: str = ""
    rtol: float = 0.0
    atol: float = 0.0
    unit: str = ""
    choices: tuple[str, ...] = ()
    demand: Demand | None = None  # what the item asks (grading.toml `demand`); optional

    def __post_init__(self):
        object.__setattr__(self, "kind", ItemKind(self.kind))  # "number" written by hand is ItemKind.NUMBER
        if self.demand is not None:
            object.__setattr__(self, "demand", Demand(self.demand))


@dataclass(frozen=True)
class GradingConfig:
    assignment: str
    folder: Path  # the trusted source folder assignments/<name>/
    student_files: tuple[str, ...]
    items: tuple[Item, ...]
    digest: str  # sha256 of grading.toml and the hidden tests: results graded under others are stale
    # Top-level course modules (tables, printing helpers) the student folder gets a copy of and the
    # Gradescope bundle carries: declared once here, read by the build and the bundle alike.
    shared_modules: tuple[str, ...] = ()

    @property
    def total_points(self) -> float:
        return math.fsum(item.points for item in self.items)

    def items_of(self, *kinds: ItemKind) -> tuple[Item, ...]:
        return tuple(item for item in self.items if item.kind in kinds)

    @property
    def student_module(self) -> str | None:
        """The module name of the student's .py file (function items live there)."""
        names = [Path(f).stem for f in self.student_files if f.endswith(".py")]
        return names[0] if names else None

    @property
    def notebook(self) -> str | None:
        names = [f for f in self.student_files if f.endswith(".ipynb")]
        return names[0] if names else None

    def trusted_files(self) -> dict[str, Path]:
        """Every file of the source folder a student must not be able to replace (relative name -> path)."""
        overlay = {}
        for path in sorted(self.folder.rglob("*")):
            rel = path.relative_to(self.folder).as_posix()
            if not path.is_file() or rel in self.student_files:
                continue
            if any(part in ("__pycache__", ".ipynb_checkpoints", ".pytest_cache") for part in path.parts):
                continue
            overlay[rel] = path
        return overlay


def load_config(assignment: str, *, assignments_dir: Path | None = None) -> GradingConfig:
    """Read and validate assignments/<assignment>/grading.toml (of this repository by default)."""
    assignments_dir = ASSIGNMENTS_DIR if assignments_dir is None else assignments_dir
    if not assignment or "/" in assignment or assignment.startswith("."):
        raise ConfigError(f"invalid assignment name {assignment!r}")
    folder = assignments_dir / assignment
    path = folder / "grading.toml"
    if not path.is_file():
        raise ConfigError(f"{path} not found: is {assignment!r} an assignment of this repository?")
    raw_bytes = path.read_bytes()
    try:
        raw = tomllib.loads(raw_bytes.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None

    unknown = unknown_key_problems(raw, TOP_LEVEL_KEYS, str(path))
    if unknown:
        raise ConfigError("; ".join(unknown))
    if raw.get("assignment") != assignment:
        raise ConfigError(f"{path}: assignment = {raw.get('assignment')!r}, expected {assignment!r}")
    student_files = raw.get("student_files")
    if not (isinstance(student_files, list) and student_files
            and all(isinstance(f, str) and f and "/" not in f for f in student_files)):
        raise ConfigError(f"{path}: student_files must be a non-empty list of file names")
    raw_items = raw.get("items")
    if not isinstance(raw_items, list) or not raw_items:
        raise ConfigError(f"{path}: no [[items]]")

    shared = raw.get("shared_modules", [])
    if not (isinstance(shared, list) and all(isinstance(m, str) and m.endswith(".py") and "/" not in m
                                             for m in shared)):
        raise ConfigError(f"{path}: shared_modules must be a list of top-level module file names (x.py)")
    overlap = sorted(set(shared) & set(student_files))
    if overlap:
        raise ConfigError(f"{path}: {overlap} cannot be both a shared module and a student file")

    items = tuple(_parse_item(entry, f"{path} item #{i + 1}") for i, entry in enumerate(raw_items))
    ids = [item.id for item in items]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"{path}: duplicate item ids {duplicates}")
    return GradingConfig(assignment, folder, tuple(student_files), items,
                         _grading_digest(assignment, raw_bytes, shared), tuple(shared))


def _grading_digest(assignment: str, grading_toml: bytes, shared_modules: list[str]) -> str:
    """sha256 of grading.toml and of everything the hidden cases are made of (the hidden-test
    package with its property examples, the reference, the shared modules): a re-run regrades a
    submission whenever any of them changed, not only when grading.toml did."""
    h = hashlib.sha256(grading_toml)
    sources = [REPO_ROOT / "autograder" / assignment, REPO_ROOT / "solutions" / assignment]
    sources += [REPO_ROOT / module for module in shared_modules]
    # data files the keys are measured on (e.g. real_tensors.npz) sit in the assignment's folder
    sources += sorted((REPO_ROOT / "assignments" / assignment).glob("*.npz"))
    for source in sources:
        files = sorted(source.rglob("*")) if source.is_dir() else [source] if source.is_file() else []
        for path in files:
            # variant_seed: a new seed draws every student's variant anew
            if path.is_file() and "__pycache__" not in path.parts and (
                    path.suffix in (".py", ".json", ".toml", ".npz") or path.name == "variant_seed"):
                h.update(b"\0" + path.relative_to(REPO_ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _parse_item(entry: object, where: str) -> Item:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: must be a table")
    item_id, kind, points = entry.get("id"), entry.get("kind"), entry.get("points")
    if not isinstance(item_id, str) or not item_id.isidentifier():
        raise ConfigError(f"{where}: id must be a Python identifier, got {item_id!r}")
    where = f"{where} ({item_id})"
    unknown = unknown_key_problems(entry, ITEM_KEYS, where)
    if unknown:
        raise ConfigError("; ".join(unknown))
    if kind not in tuple(ItemKind):
        raise ConfigError(f"{where}: kind must be one of {tuple(k.value for k in ItemKind)}, got {kind!r}")
    kind = ItemKind(kind)
    if isinstance(points, bool) or not isinstance(points, (int, float)) or not points > 0:
        raise ConfigError(f"{where}: points must be a positive number, got {points!r}")
    rtol, atol = entry.get("rtol", 0.0), entry.get("atol", 0.0)
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or tol < 0:
            raise ConfigError(f"{where}: {name} must be a non-negative number, got {tol!r}")
    choices = entry.get("choices", [])
    if kind == "choice" and not (isinstance(choices, list) and choices
                                 and all(isinstance(c, str) and c for c in choices)):
        raise ConfigError(f"{where}: a choice item needs a non-empty list of choices")
    if kind == "number" and rtol == 0 and atol == 0:
        raise ConfigError(f"{where}: a number item needs rtol or atol (exact float answers are unfair)")
    demand = entry.get("demand")
    allowed = DEMANDS_OF_KIND[kind]
    if demand is not None and demand not in allowed:
        raise ConfigError(f"{where}: demand of a {kind.value} item must be one of "
                          f"{tuple(d.value for d in allowed)}, got {demand!r}")
    return Item(id=item_id, kind=kind, points=float(points), title=str(entry.get("title", "")),
                rtol=float(rtol), atol=float(atol), unit=str(entry.get("unit", "")),
                choices=tuple(choices), demand=None if demand is None else Demand(demand))
