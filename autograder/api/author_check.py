"""`python -m autograder check <name>`: everything an author must get right, in the author's terms.

In order: grading.toml (with the late policy and what the shared modules import), the build (or,
frozen, the drift), the reference module as the suite reads it, the hidden tests and the answer
key, the leak check, the public examples against the reference, the reference submission (full
automatic marks), the released skeleton (no points for functions), and, on a scratch copy, the
released solutions (their demo runs) and the Gradescope bundle. Each step reports what is wrong
and where to fix it; a step that cannot run because an earlier one failed is skipped, saying so.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from autograder.build.assignment import build_everything, write_reference_submission
from autograder.build.leaks import find_leaks
from autograder.build.student_files import PUBLIC_CASES
from autograder.engine.assignment import load_assignment
from autograder.engine.lateness import load_policy
from autograder.engine.registry import REPO_ROOT, GradingConfig, load_config
from autograder.build.variant_check import lessons_module
from autograder.engine.variants import has_variants, keys_for
from autograder.engine.vocabulary import ItemKind
from autograder.errors import InstructorError
from autograder.sandbox import confinement

SELFCHECK_TIMEOUT = 120  # seconds for `python selfcheck.py` on the reference
DEMO_TIMEOUT = 120  # seconds for `python demo.py` in the released solutions
# What the suite (tests/build/test_reference_submission.py) takes for a function left unfinished.
UNFINISHED = re.compile(r"NotImplementedError|SOLUTION")


@dataclass
class Step:
    title: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems and not self.skipped


@dataclass
class CheckReport:
    assignment: str
    steps: list[Step] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(step.ok for step in self.steps)

    def verdict(self) -> str:
        return f"{self.assignment}: " + ("ready" if self.ok else "fix the problems above, then run check again")


def step_lines(step: Step) -> list[str]:
    mark = "-" if step.skipped else "✓" if step.ok else "✗"
    out = [f"  {mark} {step.title}" + (f" (skipped: {step.skipped})" if step.skipped else "")]
    out += [f"      {note}" for note in step.notes]
    out += [f"      - {problem}" for problem in step.problems]
    return out


def check_assignment(name: str, *, frozen: bool = False, isolation: str = confinement.DEFAULT.name,
                     on_step: Callable[[Step], None] | None = None, variants: int | None = None,
                     lesson_variants: int | None = None) -> CheckReport:
    """Run every step; `frozen` checks the generated files for drift instead of rewriting them."""
    report = CheckReport(name)

    def run(title: str, body: Callable[[Step], None], needs_ok: bool = True) -> Step:
        step = Step(title)
        if needs_ok and not report.ok:
            step.skipped = "an earlier step failed"
        else:
            try:
                body(step)
            except InstructorError as err:
                step.problems.append(str(err))
            except Exception as err:  # noqa: BLE001 - the author's code (reference, key, hidden tests) failed
                step.problems.append(_author_code_failure(err))
        report.steps.append(step)
        if on_step:
            on_step(step)
        return step

    run("grading.toml", lambda step: _grading_toml(name, step))
    run("generated student files: drift" if frozen else "build", lambda step: _build(name, frozen, step))
    with tempfile.TemporaryDirectory(prefix=f"cs349e-check-{name}-") as scratch:
        scratch = Path(scratch)
        run("the reference module is finished", lambda step: _reference_module(name, scratch, step))
        run("hidden tests and answer key", lambda step: _hidden_tests(name, step))
        run("nothing in the student folder leaks a solution, an answer or a key", lambda step: _leaks(name, step))
        run("public examples pass on the reference", lambda step: _public_examples(name, scratch, step))
        run("the reference submission earns every automatic point",
            lambda step: _reference(name, scratch, isolation, step))
        if has_variants(name):
            run("per-student variants: every sampled key defined and plausible, the reference earns every "
                "automatic point in each", lambda step: _variants(name, scratch, isolation, variants, step))
            if lessons_module(name) is not None:
                run("per-student variants: every item's lesson holds and every choice leads the runner-up by its "
                    "margin", lambda step: _lessons(name, lesson_variants, step))
        run("the released skeleton earns no points for functions",
            lambda step: _skeleton(name, scratch, isolation, step))
        run("release-solutions writes the solutions and their demo runs",
            lambda step: _released_solutions(name, scratch, step))
        run("the Gradescope bundle builds with this assignment only",
            lambda step: _gradescope_bundle(name, scratch, step))
    return report


def _grading_toml(name: str, step: Step) -> None:
    config = load_config(name)
    step.notes.append(_describe_config(config))
    policy = load_policy(config)
    if policy is None:
        step.notes.append(f"warning: no [late] table in assignments/{name}/grading.toml: late work loses "
                          "nothing (`python -m autograder new` writes the course's policy)")
    else:
        last = "no last day" if policy.accept_days is None else f"nothing after {policy.accept_days:g} days"
        step.notes.append(f"late policy: {policy.percent_per_day:g}% per started day, at most "
                          f"{policy.max_percent:g}%, grace {policy.grace_minutes:g} min, {last}")
    step.problems += unshipped_imports(config)


def _describe_config(config: GradingConfig) -> str:
    kinds = {kind: len(config.items_of(kind)) for kind in ItemKind}
    listed = ", ".join(f"{n} {kind.value}" for kind, n in kinds.items() if n)
    return f"{len(config.items)} items ({listed}), {config.total_points:g} points; students hand in " \
           f"{', '.join(config.student_files)}"


def unshipped_imports(config: GradingConfig, root: Path = REPO_ROOT) -> list[str]:
    """Course modules that a shared module or the reference student module imports but the student
    folder never gets: `python hw_specs.py` there fails without console.py beside it."""
    shipped = {Path(f).stem for f in (*config.shared_modules, *config.student_files) if f.endswith(".py")}
    sources = [(module, root / module) for module in config.shared_modules]
    if config.student_module:
        sources.append((f"solutions/{config.assignment}/{config.student_module}.py",
                        root / "solutions" / config.assignment / f"{config.student_module}.py"))
    problems = []
    for shown, path in sources:
        if not path.is_file():
            problems.append(f"{shown}: not found (grading.toml's shared_modules names files of the course root)")
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for top in sorted({n.split(".")[0] for n in names} - shipped):
                if (root / f"{top}.py").is_file():
                    problems.append(f"{shown} imports {top} (line {node.lineno}), which the student folder does "
                                    f"not have: add \"{top}.py\" to shared_modules in assignments/"
                                    f"{config.assignment}/grading.toml")
                elif (root / top).is_dir() and top != config.assignment:
                    problems.append(f"{shown} imports {top} (line {node.lineno}), a course package students "
                                    "never get")
    return problems


def _build(name: str, frozen: bool, step: Step) -> None:
    changed = build_everything(name, check=frozen)
    if frozen:
        step.problems += [f"{path} differs from what the build produces: run "
                          f"`python -m autograder build {name}` and commit the result" for path in changed]
    else:
        step.notes.append(f"rewrote {', '.join(changed)}" if changed else "already up to date")


def _reference_module(name: str, scratch: Path, step: Step) -> None:
    """The solved files, exactly the student files, with no trace of a stub or a marker (the suite
    checks the same for every assignment of the repository)."""
    config = load_config(name)
    folder = scratch / "solved"
    write_reference_submission(name, folder)
    written = sorted(p.name for p in folder.iterdir())
    if written != sorted(config.student_files):
        step.problems.append(f"the reference submission holds {written}, grading.toml's student_files "
                             f"are {sorted(config.student_files)}")
    for student_file in config.student_files:
        if not student_file.endswith(".py"):
            continue
        for number, line in enumerate((folder / student_file).read_text(encoding="utf-8").splitlines(), 1):
            found = UNFINISHED.search(line)
            if found:
                step.problems.append(f"solutions/{name}/{student_file}: line {number} of the solved module says "
                                     f"{found[0]} ({line.strip()}): the suite takes it for an unfinished "
                                     "function; reword it (the skeleton's stubs say what to replace)")


def _hidden_tests(name: str, step: Step) -> None:
    load_assignment.cache_clear()
    assignment = load_assignment(name)
    for item_id, suite in assignment.suites.items():
        step.notes.append(f"{item_id}: {len(suite.cases)} cases, {len(suite.properties)} properties")


def _leaks(name: str, step: Step) -> None:
    step.problems += find_leaks(name, dict(load_assignment(name).answer_key))


def _public_examples(name: str, scratch: Path, step: Step) -> None:
    """The generated self-check, run the way a student runs it, on the reference's files."""
    config = load_config(name)
    folder = scratch / "public" / name
    shutil.copytree(config.folder, folder, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    write_reference_submission(name, folder)
    cases = _public_case_functions(folder)
    functions = [item.id for item in config.items_of(ItemKind.FUNCTION)]
    step.problems += [f"{PUBLIC_CASES} has no example for {f}: students get no public check of it"
                      for f in functions if f not in cases]
    step.problems += [f"{PUBLIC_CASES} has examples for {f}, which is not a function item of grading.toml"
                      for f in sorted(set(cases) - set(functions))]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NBGRADER_EXECUTION")}
    if has_variants(name):  # the reference's notebook names no student: it runs as the lecture's variant
        from autograder.engine.grader import STUDENT_ID_ENV, VARIANT_ENV
        from autograder.engine.variants import canonical_json, lecture_params

        env.update({STUDENT_ID_ENV: "LECTURE", VARIANT_ENV: canonical_json(lecture_params(name))})
    try:
        done = subprocess.run([sys.executable, "selfcheck.py"], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=SELFCHECK_TIMEOUT)
    except subprocess.TimeoutExpired:
        step.problems.append(f"`python selfcheck.py` on the reference ran over {SELFCHECK_TIMEOUT} s")
        return
    failing = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith(("✗", "…"))]
    if done.returncode != 0 or failing:
        detail = failing or (done.stderr.strip().splitlines() or ["(no output)"])[-3:]
        step.problems += [f"on the reference solution, selfcheck says: {line}" for line in detail]
        step.problems.append(f"fix the example in assignments/{name}/{PUBLIC_CASES} or the reference in "
                             f"solutions/{name}/{config.student_module}.py")


def _public_case_functions(folder: Path) -> dict[str, int]:
    """function -> number of public examples, read by the student folder's own interpreter."""
    code = ("import collections, json, public_cases; "
            "print(json.dumps(collections.Counter(c.function for c in public_cases.CASES)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise InstructorError(f"{PUBLIC_CASES} cannot be imported in the student folder: {last}")
    return json.loads(done.stdout)


def _reference(name: str, scratch: Path, isolation: str, step: Step) -> None:
    from autograder.engine.grader import grade_submission

    folder = scratch / "reference" / "reference"
    write_reference_submission(name, folder)
    result = grade_submission(name, folder, isolation=isolation)
    key = keys_for(name, result.student_id or None)  # with variants: the folder's student's
    for item in result.items:
        if item.status != "manual" and item.score < item.max_score:
            expected = (f" Expected {key[item.id]!r} (answer_key() in solutions/{name}/answers.py); the "
                        f"answered notebook (the Question's answer in solutions/{name}/handout.py) gives:"
                        if item.id in key else "")
            step.problems.append(f"{item.id}: the reference scores {item.score:g} / {item.max_score:g} "
                                 f"({item.status}).{expected} {_first_lines(item.feedback_md)}")
    step.notes.append(f"{result.score:g} / {result.auto_max_score:g} automatic points "
                      f"({result.max_score:g} with the hand-graded items), graded under {result.isolation}")


def _variants(name: str, scratch: Path, isolation: str, n: int | None, step: Step) -> None:
    from autograder.build.variant_check import GRADED_SAMPLES, KEY_SAMPLES, summarize_variants
    from autograder.engine.grader import grade_submission
    from autograder.engine.variants import samples

    n = KEY_SAMPLES if n is None else n
    summary = summarize_variants(name, n)
    step.notes.append(f"{len(summary.labels)} sampled variants: {', '.join(summary.labels)}")
    step.notes += summary.rows
    step.problems += summary.problems
    folder = scratch / "variants" / "reference"
    write_reference_submission(name, folder)
    graded = []
    for label, params in samples(name, min(n, GRADED_SAMPLES)):
        result = grade_submission(name, folder, isolation=isolation, student_id=label, id_source="check",
                                  variant_params=params)
        graded.append(f"{label} {result.score:g}/{result.auto_max_score:g}")
        step.problems += [f"variant {label} {params}: the reference scores {item.score:g} / {item.max_score:g} on "
                          f"{item.id} ({item.status}): {_first_lines(item.feedback_md, 3)}"
                          for item in result.items if item.status != "manual" and item.score < item.max_score]
    step.notes.append(f"the reference, graded in {len(graded)} of them: {', '.join(graded)}")


def _lessons(name: str, n: int | None, step: Step) -> None:
    import time

    from autograder.build.variant_check import LESSON_SAMPLES, check_lessons

    start = time.perf_counter()
    summary = check_lessons(name, LESSON_SAMPLES if n is None else n)
    step.notes.append(f"{summary.samples} sampled variants (LECTURE, check-1, …) in {time.perf_counter() - start:.0f} s; "
                      "per lesson: the range of its quantity over them, its bound, what it teaches")
    step.notes += summary.rows
    step.problems += summary.problems


def _skeleton(name: str, scratch: Path, isolation: str, step: Step) -> None:
    from autograder.engine.grader import grade_submission

    config = load_config(name)
    folder = scratch / "skeleton" / "skeleton"
    folder.mkdir(parents=True)
    for student_file in config.student_files:
        shutil.copyfile(config.folder / student_file, folder / student_file)
    result = grade_submission(name, folder, isolation=isolation)
    functions = [item for item in result.items if item.kind == ItemKind.FUNCTION]
    for item in functions:
        if item.score > 0:
            step.problems.append(f"{item.id}: the unmodified skeleton scores {item.score:g} / {item.max_score:g}; "
                                 "a hidden test passes without any code (e.g. only must-raise cases, or an "
                                 "expected value the stub happens to return)")
    step.notes.append(f"{sum(i.score for i in functions):g} / {sum(i.max_score for i in functions):g} points "
                      f"on functions, {result.score:g} in total")


def _released_solutions(name: str, scratch: Path, step: Step) -> None:
    """release-solutions into the scratch folder, then `python demo.py` there as a student runs it."""
    from autograder.nbgrader_bridge.solutions_bundle import DEMO, write_solutions_bundle

    folder = scratch / "released_solutions" / name
    written = write_solutions_bundle(name, folder)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NBGRADER_EXECUTION")}
    try:
        done = subprocess.run([sys.executable, DEMO], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=DEMO_TIMEOUT)
    except subprocess.TimeoutExpired:
        step.problems.append(f"`python {DEMO}` in the released solutions ran over {DEMO_TIMEOUT} s")
        return
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-3:]
        step.problems.append(f"`python {DEMO}` in the released solutions exits {done.returncode}: "
                             f"{' | '.join(last)} (fix solutions/{name}/{DEMO})")
    step.notes.append(f"{len(written)} files; `python {DEMO}` prints {len(done.stdout.splitlines())} lines")


def _gradescope_bundle(name: str, scratch: Path, step: Step) -> None:
    from autograder.gradescope.bundle import build_bundle

    bundle = build_bundle(name, scratch / "autograder.zip")
    config = load_config(name)
    packed = set(bundle.sources)
    missing = [m for m in config.shared_modules if m not in packed]
    missing += [f"assignments/{name}/{rel}" for rel in config.trusted_files()
                if f"assignments/{name}/{rel}" not in packed and not rel.startswith(".") and "/." not in rel]
    step.problems += [f"the Gradescope bundle lacks {rel}" for rel in missing]
    step.notes.append(f"{len(bundle.sources)} source files, {bundle.path.stat().st_size // 1024} KB")


def _author_code_failure(err: Exception) -> str:
    """The exception and the innermost line of the course's own code that raised it."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if Path(f.filename).is_relative_to(REPO_ROOT)]
    where = ""
    if frames:
        frame = frames[-1]
        where = f" at {Path(frame.filename).relative_to(REPO_ROOT).as_posix()}:{frame.lineno} ({frame.line})"
    return f"{type(err).__name__}: {err}{where}"


def _first_lines(feedback: str, count: int = 6) -> str:
    lines = [line for line in feedback.splitlines() if line.strip()]
    return " | ".join(lines[:count])
