"""The corpus of submissions of an assignment (tests/corpus/<assignment>/<case>/) and how a test
batch is assembled from it.

Each case folder holds the files a student would submit, plus an optional `case.toml`:

    description = "…"
    <module> = "own" | "reference" | "skeleton"        # where the student module comes from (default
                                                       # own); the key is its name, e.g. codesign
    notebook = "reference" | "skeleton" | "own" | "none"  # where handout.ipynb comes from
    score = "full" | "zero" | "low" | "partial" | "functions"
                                                       # zero / low: on the items that need the student
                                                       # module (items_answered_without_the_student_module)
    feedback = ["…"]                                   # substrings the feedback must contain
    mutations = ["…"]                                  # names from tests/mutants.py applied to a
                                                       # "reference" student module (one bug, no copy)

A case without case.toml (e.g. correct_loops/) is an honest, correct implementation graded with
the reference notebook: full marks. "reference" files are generated at test time with
autograder.build.write_reference_submission, "skeleton" files are the assignment's own.
"""

from __future__ import annotations

import ast
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from autograder.build import write_reference_submission
from autograder.engine.registry import ASSIGNMENTS_DIR, REPO_ROOT, load_config
from mutants import CODE_MUTATIONS_BY_NAME, apply_code_mutation

ASSIGNMENT = "lec01_codesign"  # the assignment whose corpus and examples the engine tests grade
CONFIG = load_config(ASSIGNMENT)
CORPUS_DIR = REPO_ROOT / "tests" / "corpus" / ASSIGNMENT
EXAMPLES_DIR = REPO_ROOT / "examples" / ASSIGNMENT / "submissions"
SOURCES = ("own", "reference", "skeleton", "none")
SCORES = ("full", "zero", "low", "partial", "functions")
LOW_FRACTION = 0.1  # "low": at most this share of the automatic points


@dataclass(frozen=True)
class CorpusCase:
    name: str
    folder: Path
    description: str
    module: str  # where the student module comes from
    notebook: str
    score: str
    feedback: tuple[str, ...]
    mutations: tuple[str, ...] = ()  # applied to the reference module
    loses: tuple[str, ...] = ()  # "full" but for these items, each for the reason case.toml gives


def corpus_cases() -> list[CorpusCase]:
    cases = []
    for folder in sorted(p for p in CORPUS_DIR.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        meta = tomllib.loads((folder / "case.toml").read_text("utf-8")) if (folder / "case.toml").exists() else {}
        case = CorpusCase(folder.name, folder, meta.get("description", "a correct implementation"),
                          meta.get(CONFIG.student_module, "own"), meta.get("notebook", "reference"),
                          meta.get("score", "full"), tuple(meta.get("feedback", ())), tuple(meta.get("mutations", ())),
                          tuple(meta.get("loses", ())))
        if case.module not in SOURCES or case.notebook not in SOURCES or case.score not in SCORES:
            raise ValueError(f"{folder}/case.toml: bad {CONFIG.student_module}/notebook/score in {meta}")
        unknown = [name for name in case.mutations if name not in CODE_MUTATIONS_BY_NAME]
        if unknown or (case.mutations and case.module != "reference"):
            raise ValueError(f"{folder}/case.toml: mutations {unknown or list(case.mutations)} need "
                             f"{CONFIG.student_module} = \"reference\" and names from tests/mutants.py")
        cases.append(case)
    return cases


def materialize(cases: list[CorpusCase], submissions: Path, reference: Path) -> None:
    """One student folder per case in `submissions`; `reference` holds a reference submission."""
    skeleton = ASSIGNMENTS_DIR / ASSIGNMENT
    origin = {"reference": reference, "skeleton": skeleton}
    for case in cases:
        dest = submissions / case.name
        dest.mkdir(parents=True)
        for path in case.folder.iterdir():
            if path.is_file() and path.name != "case.toml":
                shutil.copyfile(path, dest / path.name)
        for name, source in ((f"{CONFIG.student_module}.py", case.module), (CONFIG.notebook, case.notebook)):
            if source in origin:
                shutil.copyfile(origin[source] / name, dest / name)
        if case.mutations:
            module = dest / f"{CONFIG.student_module}.py"
            text = module.read_text("utf-8")
            for name in case.mutations:
                text = apply_code_mutation(text, CODE_MUTATIONS_BY_NAME[name])
            module.write_text(text, "utf-8")


def write_reference(dest: Path) -> Path:
    write_reference_submission(ASSIGNMENT, dest)
    return dest


def items_answered_without_the_student_module(assignment: str = ASSIGNMENT) -> frozenset[str]:
    """Report items whose reference answer uses none of the student's functions, directly or through
    a name an earlier statement of the notebook computed with them (static, statement by statement,
    in the order the cells run: a name assigned again from clean values is clean again, and the loop
    variables of a comprehension or the locals of a function never leave it).

    A submission whose functions are broken or hostile can still answer these honestly (a byte count,
    a context length from the chip table), so "low" is judged on the other items."""
    from autograder.build.assignment import notebook_cells

    config = load_config(assignment)
    tainted = {config.student_module, *(item.id for item in config.items_of("function"))}
    prose = {item.id for item in config.items_of("text")}
    modules: set[str] = set()  # a call on a module (np.mean) does not change it
    for cell in notebook_cells(assignment, config.notebook):
        if getattr(cell, "id", None) in prose:
            continue
        code = getattr(cell, "answer", None) or (getattr(cell, "source", None) if type(cell).__name__ == "Code" else None)
        if not code:
            continue
        for statement in ast.parse(code).body:
            loads = _free_loads(statement)
            if isinstance(statement, ast.ImportFrom) and statement.module in tainted:
                loads.add(statement.module)
            stores = _bound_names(statement)
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                modules |= stores
            if loads & tainted:
                tainted |= stores | (_mutated(statement) - modules)
            elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
                tainted -= stores  # rebound from clean values only
    return frozenset(item.id for item in config.items_of("number", "choice") if item.id not in tainted)


_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)


def _names(node, ctx) -> set[str]:
    """Names of context `ctx` in `node`, not descending into nested scopes."""
    found = {node.id} if isinstance(node, ast.Name) and isinstance(node.ctx, ctx) else set()
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, _SCOPES):
            found |= _names(child, ctx)
    return found


def _scope_locals(scope) -> set[str]:
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = scope.args
        params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        body = scope.body if isinstance(scope.body, list) else [scope.body]
        return params | set().union(*(_names(b, ast.Store) for b in body))
    return set().union(*(_names(g.target, ast.Store) for g in scope.generators))


def _free_loads(node) -> set[str]:
    """Names `node` reads from the notebook's globals: a nested scope's own locals are not among them."""
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) else set()
    loads = set().union(*(_free_loads(child) for child in ast.iter_child_nodes(node)))
    return loads - _scope_locals(node) if isinstance(node, _SCOPES) else loads


def _mutated(statement) -> set[str]:
    """Names whose object a statement may change in place: `sweep[k].append(v)`, `d[k] = v`, `o.x = v`."""
    def base(node):
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return {node.id} if isinstance(node, ast.Name) else set()

    names = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            names |= base(node.func.value)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
            names |= base(node.value)
    return names


def _bound_names(statement) -> set[str]:
    """The notebook-level names a statement binds (not a comprehension's loop variables, not a function's locals)."""
    names = _names(statement, ast.Store)
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names = {statement.name}
    for node in ast.walk(statement):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def score_outside(result, independent: frozenset[str]) -> tuple[float, float]:
    """(score, maximum) of a result's automatic items, leaving out the items in `independent`."""
    auto = [i for i in result.items if i.status != "manual" and i.id not in independent]
    return sum(i.score for i in auto), sum(i.max_score for i in auto)
