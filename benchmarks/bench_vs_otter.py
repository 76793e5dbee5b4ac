"""Side by side on the same submissions and the same checks: the trusted grader
(`python -m autograder grade -j N`) versus Otter-Grader 7 (`otter run`, containerless).

Run: python benchmarks/bench_vs_otter.py [--students 20] [--rounds 2] [--otter PATH]

Otter is installed in a virtualenv of its own (so it cannot change the kit's dependencies), with
what the notebook imports and a Jupyter kernel: otter-grader 7, ipykernel, numpy, matplotlib,
rich, nbformat, threadpoolctl. `--otter` names its `otter` command (or that virtualenv's
python, run as `python -m otter`); default: $CS349E_OTTER, else `otter` on PATH. The interpreter
behind it must import otter-grader 7, or the benchmark stops and says so. Nothing is downloaded.

1. The class: --students distinct students, each under an id of their own (so a variant of their
   own): s000 hands in the reference submission, s001… each one seeded bug of tests/mutants.py —
   first every code mutation in catalogue order (ties to the smaller value, no saturation, wrong
   block size, inverted ratios, …), then one wrong report answer each, item by item in
   grading.toml order, derived from that student's own key. Ids and class are the same in every run.
2. The Otter port (benchmarks/otter_port.py, the support module in the zip): an autograder zip
   made by `otter generate` from exception-based Otter test files, one per graded item of
   grading.toml (the 7 functions and 53 number or choice answers). A function's file has one
   Otter test case per hidden case of autograder/lec01_codesign/ and one per hypothesis property,
   each calling the student's function on the kit's inputs (a chip rebuilt from its description by
   the trusted hw_specs, as the kit's sandbox rebuilds it) and comparing with the value the kit's
   reference computed, by the kit's rule (exact; rtol 1e-9 for ratios; the sign of zero; quantize's
   nudged alternatives: boundary.py); a property passes when all its fixed examples
   (property_examples.json) pass. Points per case: the item's points × the case's weight / the
   item's total weight, and a must-raise case counts only once some value test passed, as in the
   kit. An answer's file checks the notebook variable against that student's key
   (`answer_key(params_for(id))`, keyed by student id in a data file), numbers within the item's
   rtol/atol, choices by letter; the measured roofline (q28a, q29, q28) within the kit's factor of
   cpu_timing.reference_measurements(), the items derived from it from the student's own values,
   grounded as the kit grounds them (the kit's formulas are checked against the port's before the
   zip is built). The zip also carries every trusted file the kit lays over a submission
   (hw_specs.py, cpu_timing.py, selfcheck.py, variants.json, the .npz data, …). All expected values
   are computed in this, the trusted, process; building the zip is not timed (once per assignment).
   Checks per submission are counted on both sides and printed: the kit's from its results JSON
   of s000 (cases + property examples + report answers), Otter's from the test cases Otter ran on
   s000 (its results pickle) with each property's examples; they are equal.
3. Timing: --rounds alternating rounds (who goes first rotates), each grading the whole class
   with the kit's `grade -j 1`, serial `otter run` (one submission after the other), the kit's
   `grade -j 2` and `otter run` 2 at a time (two otter processes over the class); after one
   untimed warm-up of each on s000. Printed: the medians over the rounds of the wall time and of
   the CPU time of each whole process tree per submission (a cgroup v1 cpuacct group every
   command starts in: the grader, its sandboxes; otter, its Jupyter kernel; where there is none,
   RUSAGE_CHILDREN, which misses the kit's sandboxes, and says so), the ratios Otter / kit,
   serial and at 2 workers, and the load of the machine before and after.
4. Scores: each student's automatic total from both sides in every timed grading, and whether
   every item agrees (the kit rounds an item's score to 0.01, Otter sums its cases' points: an
   item agrees within 0.01, so two totals may differ by a few hundredths where items score partial
   credit). Every disagreement is listed with its item.

What differs by design, and is not "fixed" here: Otter grades inside the student's own kernel,
after the student's notebook ran there (the kit calls the functions in a fresh sandbox before the
notebook runs, compares in its trusted parent, and takes its reference measurement in a sandbox
of its own before any student code): a submission can reach Otter's tests, data files and
expected values, which honest submissions do not. Otter has no per-call timeouts, reply-size
bounds or crash accounting (only hostile code meets them); the kit's feedback shrinks a failing
property with hypothesis (at most 150 more calls, message only); the port's messages are short
English. The student id reaches Otter's kernel the way it reaches the kit's sandbox, in the
environment (CS349E_STUDENT_ID and CS349E_VARIANT, with CS349E_TRUSTED_GRADING=1): containerless
`otter run` has no submission metadata. Otter's kernel draws the notebook's figures inline (the
kit's `grade` records them by their text) and uses numpy's default BLAS threads outside
cpu_timing's pinned timings (the kit's sandbox runs one).
Memory: not measured; no target is about memory.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(HERE)]

ASSIGNMENT = "lec01_codesign"
OTTER_ENV = "CS349E_OTTER"
PORT = HERE / "otter_port.py"
TOLERANCE = 0.01   # the kit's rounding step of an item's score


# --- which Otter ------------------------------------------------------------------------------
def otter_command(otter: str | None) -> tuple[list[str], str]:
    """(the command that runs Otter, the interpreter it runs in); `otter` is the otter script or
    a python that has otter-grader installed (default: $CS349E_OTTER, else `otter` on PATH)."""
    otter = otter or os.environ.get(OTTER_ENV) or shutil.which("otter") or "otter"
    path = Path(otter)
    if path.name.startswith("python"):
        return [str(path), "-m", "otter"], str(path)
    try:
        first = path.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
    except OSError:
        return [otter], ""
    interpreter = shlex.split(first[2:])[0] if first.startswith("#!") and first[2:].strip() else ""
    return [str(path)], interpreter


def otter_problem(otter: str | None = None) -> str:
    """"" when otter-grader 7 imports from the interpreter behind `otter`, else why not."""
    command, interpreter = otter_command(otter)
    if not interpreter:
        return (f"no Otter found ({command[0]!r} is not an otter script or a python): install otter-grader 7 in a "
                f"virtualenv of its own and pass --otter /path/to/venv/bin/otter (or set {OTTER_ENV})")
    try:
        done = subprocess.run([interpreter, "-c", "import otter, sys; print(otter.__version__)"],
                              capture_output=True, text=True, timeout=120)
    except OSError as err:
        return f"cannot run Otter's interpreter {interpreter}: {err}"
    if done.returncode != 0:
        return f"otter-grader is not importable from {interpreter} (the interpreter of {command[0]})"
    version = done.stdout.strip()
    if not version.startswith("7."):
        return f"{interpreter} has otter-grader {version}, not 7.x"
    return ""


# --- the class --------------------------------------------------------------------------------
def mutations_in_order(answer_items: list[str]) -> list[str]:
    """The reference (no mutation), every code mutation, then one wrong answer per report item."""
    import mutants

    return ["", *(m.name for m in mutants.CODE_MUTATIONS), *(mutants.ANSWER_PREFIX + i for i in answer_items)]


def make_class(reference: Path, dest: Path, size: int) -> dict[str, str]:
    """`size` student folders under `dest`, s000 the reference and each other one seeded bug;
    returns student id -> mutation ("" for the reference)."""
    import mutants
    from autograder.engine.variants import keys_for

    candidates = mutations_in_order(plain_answer_items())
    if size > len(candidates):
        raise SystemExit(f"--students {size}: at most {len(candidates)} distinct single-bug students")
    roster = {}
    for index, mutation in enumerate(candidates[:size]):
        sid = f"s{index:03d}"
        key = keys_for(ASSIGNMENT, sid) if mutation.startswith(mutants.ANSWER_PREFIX) else None
        mutants.mutate_submission(reference, dest / sid, (mutation,) if mutation else (), key)
        roster[sid] = mutation
    return roster


def plain_answer_items() -> list[str]:
    """Report items whose key is a number or a letter (not a measurement), in grading.toml order."""
    from autograder.engine.assignment import load_assignment
    from autograder.engine.vocabulary import KEYED_KINDS

    key = load_assignment(ASSIGNMENT).answer_key
    return [i.id for i in load_assignment(ASSIGNMENT).config.items_of(*KEYED_KINDS)
            if isinstance(key.get(i.id), (str, int, float))]


# --- the Otter port: data ------------------------------------------------------------------------
def plain_value(value):
    """An argument as plain picklable data (no kit class): a rebuilt value becomes a marked dict."""
    import numpy as np

    import otter_port
    from autograder.sandbox.codec import Rebuilt

    if isinstance(value, Rebuilt):
        return {otter_port.REBUILT: value.factory, "data": plain_value(value.data)}
    if isinstance(value, tuple):
        return tuple(plain_value(v) for v in value)
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    if isinstance(value, dict):
        return {k: plain_value(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str, np.ndarray, np.generic)):
        return value
    raise SystemExit(f"no Otter port of an argument of type {type(value).__name__}")


def check_spec(check) -> dict:
    """The kit's check as data the port compares with; only the kit's four checkers are ported."""
    import numpy as np

    from autograder.engine.checks import ArrayCheck, MappingCheck, ScalarCheck
    from autograder.lec01_codesign.formats import SignedArrayCheck

    kind = {ArrayCheck: "array", SignedArrayCheck: "signed_array", ScalarCheck: "scalar",
            MappingCheck: "mapping"}.get(type(check))
    if kind is None:
        raise SystemExit(f"no Otter port of the check {type(check).__name__}")
    spec = {"check": kind, "desired": check.desired, "rtol": check.rtol, "atol": check.atol}
    if kind in ("array", "signed_array"):
        spec.update(desired=np.asarray(check.desired), alternatives=[np.asarray(a) for a in check.alternatives],
                    inputs=None if check.inputs is None else np.asarray(check.inputs))
    if kind == "mapping":
        spec["desired"] = dict(check.desired)
    return spec


def expectation(expect) -> dict:
    from autograder.engine.cases import Raises, Returns

    if isinstance(expect, Raises):
        return {"raises": expect.exc_type}
    if isinstance(expect, Returns):
        return {"returns": check_spec(expect.check)}
    raise SystemExit(f"no Otter port of the expectation {type(expect).__name__}")


def function_tests(assignment) -> dict:
    """item -> {"points", "tests"}: every hidden case and property of the kit, in the kit's order."""
    import math as _math

    from autograder.engine.cases import Raises
    from autograder.engine.properties import examples_of
    from autograder.engine.vocabulary import ItemKind

    items = {}
    for item in assignment.config.items_of(ItemKind.FUNCTION):
        suite = assignment.suites[item.id]
        tests = [{"kind": "raises" if isinstance(case.expect, Raises) else "case", "label": case.label,
                  "function": case.call.function, "args": plain_value(tuple(case.call.args)),
                  "kwargs": plain_value(dict(case.call.kwargs)), "expect": expectation(case.expect),
                  "weight": case.points_weight} for case in suite.cases]
        tests += [{"kind": "property", "label": prop.label, "function": prop.function, "weight": prop.points_weight,
                   "examples": [(plain_value(tuple(args)), expectation(prop.expect(args))) for args in examples_of(prop)]}
                  for prop in suite.properties]
        total = _math.fsum(t["weight"] for t in tests)
        for test in tests:
            test["points"] = item.points * test["weight"] / total
        items[item.id] = {"points": item.points, "tests": tests}
    return items


def port_constants() -> dict:
    from autograder.lec01_codesign.measurement import EXP_BYTES_PER_VALUE, triad_calibration
    from hw_specs import B300
    from solutions.lec01_codesign.codesign import exp_ratio, flops_per_exp

    return {"flops_per_exp_64": flops_per_exp(64, 64), "flops_per_exp_128": flops_per_exp(128, 128),
            "b300_percent": 100 * exp_ratio(B300, "fp8", 128, 128), "exp_bytes_per_value": EXP_BYTES_PER_VALUE,
            "triad_calibration": triad_calibration()}


def verify_measured_port(kit_key: dict, constants: dict) -> None:
    """The port's measured and derived items are the kit's: same items, same inputs, same
    formulas (equal on random inputs), same factor, grounded on the same measurements."""
    import cpu_timing

    import otter_port
    from autograder.engine.answer_checks import DerivedKey, GroundedKey, ReferenceKey, with_references

    rng = random.Random(349)
    table = otter_port.derived(constants)
    reference = {"exp_seconds": 0.007, "triad_seconds": 0.011, "pinned_by": "threadpoolctl",
                 **{f"gemm_seconds_{m}": 2 * m**3 / 8e10 for m in cpu_timing.GEMM_SIZES}}
    kit_reference = {i for i, k in kit_key.items() if isinstance(k, ReferenceKey)}
    kit_derived = {i for i, k in kit_key.items() if isinstance(k, DerivedKey)}
    if kit_reference != set(otter_port.REFERENCE) or kit_derived != set(table):
        raise SystemExit(f"the port's measured items {sorted(otter_port.REFERENCE)} / derived {sorted(table)} are not "
                         f"the kit's {sorted(kit_reference)} / {sorted(kit_derived)}")
    for item in kit_reference:
        key = kit_key[item]
        if key.figure(reference) != otter_port.REFERENCE[item](reference, cpu_timing) or \
                key.factor != cpu_timing.AGREEMENT_FACTOR:
            raise SystemExit(f"the port's reference figure of {item} is not the kit's")
    grounded = with_references(kit_key, lambda: reference)
    for item in kit_derived:
        needs, compute = table[item]
        if tuple(kit_key[item].needs) != tuple(needs):
            raise SystemExit(f"{item}: the port needs {needs}, the kit {kit_key[item].needs}")
        for _ in range(50):
            values = [10 ** rng.uniform(-3, 3) for _ in needs]
            if kit_key[item].compute(*values) != compute(*values):
                raise SystemExit(f"{item}: the port's formula differs from the kit's at {values}")
        kit_grounds = {g for g, _ in grounded[item].grounds} if isinstance(grounded[item], GroundedKey) else set()
        if kit_grounds != otter_port.grounds(item, table):
            raise SystemExit(f"{item}: the port grounds it on {otter_port.grounds(item, table)}, the kit on {kit_grounds}")


def answer_keys(assignment, roster: dict[str, str], constants: dict) -> dict:
    """The report items' specs and every student's keys (measured and derived items: None, the
    port computes them in the kernel as the kit does in its parent)."""
    import otter_port
    from autograder.engine.answer_checks import DerivedKey, ReferenceKey
    from autograder.engine.variants import keys_for
    from autograder.engine.vocabulary import KEYED_KINDS, ItemKind

    report = assignment.config.items_of(*KEYED_KINDS)
    students = {}
    for sid in roster:
        key = keys_for(ASSIGNMENT, sid)
        verify_measured_port(key, constants)
        plain = {}
        for item in report:
            value = key[item.id]
            if isinstance(value, (ReferenceKey, DerivedKey)):
                plain[item.id] = None
            elif isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
                plain[item.id] = value if isinstance(value, str) else float(value)
            else:
                raise SystemExit(f"{sid} {item.id}: no Otter port of a key of type {type(value).__name__}")
        students[sid] = plain
    items = {item.id: {"kind": "choice" if item.kind is ItemKind.CHOICE else "number", "points": item.points,
                       "rtol": item.rtol, "atol": item.atol, "choices": list(item.choices or ())} for item in report}
    assert set(otter_port.REFERENCE) <= set(items)
    return {"students": students, "items": items, "constants": constants}


# --- the Otter port: test files and zip ------------------------------------------------------------
HEADER = '''"""Otter port of the kit's {what} (generated by benchmarks/bench_vs_otter.py)."""
from otter.test_files import test_case

import otter_port

OK_FORMAT = False

name = {name!r}
'''


def function_test_file(item: str, data: dict) -> tuple[str, int]:
    """The test file of one function item and how many checks it makes (a property: its examples).
    Must-raise cases come last: they count only once a value test of the item passed."""
    tests = data["tests"]
    order = [i for i, t in enumerate(tests) if t["kind"] != "raises"] + [i for i, t in enumerate(tests) if t["kind"] == "raises"]
    text = HEADER.format(what=f"hidden tests of `{item}`", name=item)
    checks = 0
    for i in order:
        test = tests[i]
        checks += len(test["examples"]) if test["kind"] == "property" else 1
        case_name = f"{item} {i + 1}: {test['label']}"
        text += (f"\n\n@test_case(name={case_name!r}, points={test['points']!r}, hidden=True)\n"
                 f"def test_{i + 1:03d}():\n    otter_port.run_function_test({item!r}, {i})\n")
    return text, checks


def answer_test_file(item: str, points: float) -> str:
    return HEADER.format(what=f"answer check of `{item}`", name=item) + (
        f"\n\n@test_case(name={item!r}, points={float(points)!r}, hidden=True)\n"
        f"def test_answer(env):\n    otter_port.check_answer({item!r}, env)\n")


def build_otter_zip(work: Path, roster: dict[str, str], otter: list[str]) -> tuple[Path, dict]:
    """The autograder zip (`otter generate`) and the number of checks its tests make per submission."""
    import pickle

    import otter_port
    from autograder.engine.assignment import load_assignment

    assignment = load_assignment(ASSIGNMENT)
    constants = port_constants()
    items = function_tests(assignment)
    keys = answer_keys(assignment, roster, constants)
    source = work / "otter-source"
    (source / "tests").mkdir(parents=True)
    counts = {"cases": 0, "properties": 0, "examples": 0, "answers": 0}
    for item, data in items.items():
        text, _ = function_test_file(item, data)
        (source / "tests" / f"{item}.py").write_text(text, encoding="utf-8")
        counts["cases"] += sum(t["kind"] != "property" for t in data["tests"])
        counts["properties"] += sum(t["kind"] == "property" for t in data["tests"])
        counts["examples"] += sum(len(t["examples"]) for t in data["tests"] if t["kind"] == "property")
    for item, spec in keys["items"].items():
        (source / "tests" / f"{item}.py").write_text(answer_test_file(item, spec["points"]), encoding="utf-8")
        counts["answers"] += 1
    support = []
    for name, path in sorted(assignment.config.trusted_files().items()):   # what the kit lays over a submission
        shutil.copyfile(path, source / name)
        support.append(name)
    shutil.copyfile(PORT, source / PORT.name)
    with open(source / otter_port.CASES_FILE, "wb") as f:
        pickle.dump({"format": otter_port.FORMAT, "module": assignment.config.student_module, "items": items}, f,
                    protocol=pickle.HIGHEST_PROTOCOL)
    (source / otter_port.KEYS_FILE).write_text(json.dumps(keys, ensure_ascii=False), encoding="utf-8")
    support += [PORT.name, otter_port.CASES_FILE, otter_port.KEYS_FILE]
    done = subprocess.run([*otter, "generate", "-t", "tests", "-o", "autograder.zip", "--no-config", "--no-requirements",
                           "--no-environment", *support], cwd=source, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"otter generate failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return source / "autograder.zip", counts


def submission_zip(folder: Path, dest: Path) -> Path:
    """What Otter takes: the student's files in one zip."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.iterdir()):
            z.write(path, path.name)
    return dest


# --- running, timed ------------------------------------------------------------------------------
def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_tree(commands: list[tuple[list[str], dict, Path]], workers: int, cwd: Path) -> tuple[float, float, str]:
    """Run the commands, `workers` at a time, every one in one new cpuacct cgroup: (wall seconds,
    CPU seconds of every process they started, where the CPU was read). Each command:
    (argv, environment, log file)."""
    from bench_grading import cpuacct_group, remove_group

    group = cpuacct_group()
    enter = None if group is None else (lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
    before, start = children_cpu(), time.perf_counter()
    pending, running, failed = list(commands), [], []
    try:
        while pending or running:
            while pending and len(running) < workers:
                argv, env, log = pending.pop(0)
                out = open(log, "w", encoding="utf-8")
                running.append((subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                                 stdin=subprocess.DEVNULL, preexec_fn=enter), out, argv, log))
            time.sleep(0.05)
            for entry in [r for r in running if r[0].poll() is not None]:
                running.remove(entry)
                entry[1].close()
                if entry[0].returncode != 0:
                    failed.append((entry[2], entry[0].returncode, entry[3]))
        wall = time.perf_counter() - start
        if group is not None:
            cpu, where = int((group / "cpuacct.usage").read_text()) / 1e9, "a cpuacct cgroup"
        else:
            cpu = children_cpu() - before
            where = "RUSAGE_CHILDREN (no cpuacct cgroup here: the kit's sandboxes, reaped inside bubblewrap, are missed)"
    finally:
        if group is not None:
            remove_group(group)
    if failed:
        argv, code, log = failed[0]
        raise SystemExit(f"{len(failed)} command(s) failed; first: {' '.join(argv[:6])} … (exit {code}):\n"
                         f"{Path(log).read_text(encoding='utf-8', errors='replace')[-3000:]}")
    return wall, cpu, where


def kit_commands(submissions: Path, out: Path, jobs: int, log: Path) -> list:
    return [([sys.executable, "-m", "autograder", "grade", ASSIGNMENT, str(submissions), "--out", str(out), "-j",
              str(jobs), "--force"], dict(os.environ), log)]


def otter_env(sid: str) -> dict:
    """The kernel's environment: the kit's sandbox gets the same three variables."""
    from autograder.engine.variants import canonical_json, params_for

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update({"CS349E_TRUSTED_GRADING": "1", "CS349E_STUDENT_ID": sid,
                "CS349E_VARIANT": canonical_json(params_for(ASSIGNMENT, sid))})
    return env


def otter_commands(otter: list[str], autograder: Path, zips: dict[str, Path], out: Path, envs: dict[str, dict],
                   pickle_results: bool = False) -> list:
    commands = []
    for sid, submission in zips.items():
        (out / sid).mkdir(parents=True)
        commands.append(([*otter, "run", "-a", str(autograder), "-o", str(out / sid), "--no-logo",
                          *(["-p"] if pickle_results else []), str(submission)], envs[sid], out / f"{sid}.log"))
    return commands


# --- scores ------------------------------------------------------------------------------------
def kit_scores(out: Path) -> dict[str, dict[str, float]]:
    """student -> item -> automatic score, from the kit's results JSON."""
    scores = {}
    for path in sorted((out / "results").glob("*.json")):
        submission = json.loads(path.read_text(encoding="utf-8"))["extra_data"]["submission"]
        scores[path.stem] = {i["id"]: float(i["score"]) for i in submission["items"] if i["kind"] != "text"}
    return scores


def otter_scores(out: Path, roster) -> dict[str, dict[str, float]]:
    """student -> item (test file) -> points, from Otter's results.json."""
    scores = {}
    for sid in roster:
        tests = json.loads((out / sid / "results.json").read_text(encoding="utf-8"))["tests"]
        scores[sid] = {t["name"]: float(t["score"]) for t in tests if "score" in t and t.get("name") != "Public Tests"}
    return scores


def disagreements(kit: dict, otter: dict) -> list[tuple[str, str, float | None, float | None]]:
    found = []
    for sid in sorted(set(kit) | set(otter)):
        items = set(kit.get(sid, {})) | set(otter.get(sid, {}))
        for item in sorted(items):
            a, b = kit.get(sid, {}).get(item), otter.get(sid, {}).get(item)
            if a is None or b is None or abs(a - b) > TOLERANCE + 1e-9:
                found.append((sid, item, a, b))
    return found


def kit_checks(results: Path) -> dict[str, int]:
    """What the kit checked for one submission, read from its results JSON: each function item's
    tests (its feedback says "通过 a / M 项测试"; a property's line says how many examples it ran)
    and each number or choice answer."""
    import re

    submission = json.loads(results.read_text(encoding="utf-8"))["extra_data"]["submission"]
    counts = {"cases": 0, "properties": 0, "examples": 0, "answers": 0}
    for item in submission["items"]:
        if item["kind"] == "function":
            tests = int(re.search(r"通过 \d+ / (\d+) 项测试", item["feedback_md"]).group(1))
            examples = [int(n) for n in re.findall(r"（(\d+) 个例子）", item["feedback_md"])]
            counts["cases"] += tests - len(examples)
            counts["properties"] += len(examples)
            counts["examples"] += sum(examples)
        elif item["kind"] in ("number", "choice"):
            counts["answers"] += 1
    return counts


def otter_ran(interpreter: str, pickled: Path, counts: dict, roster_items: dict) -> dict[str, int]:
    """What Otter checked for one submission: the test cases in its results pickle, each property
    case counted by its examples (from the port's data)."""
    script = ("import dill, json, sys\nr = dill.load(open(sys.argv[1], 'rb'))\n"
              "print(json.dumps({n: [t.test_case.name for t in f.test_case_results] for n, f in r.results.items()}))")
    done = subprocess.run([interpreter, "-c", script, str(pickled)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"cannot read Otter's results pickle: {done.stderr[-2000:]}")
    ran = json.loads(done.stdout)
    result = {"cases": 0, "properties": 0, "examples": 0, "answers": 0}
    for name, cases in ran.items():
        if name in roster_items:   # a function item: its tests by index from the case names
            tests = roster_items[name]["tests"]
            for case in cases:
                test = tests[int(case.split(":", 1)[0].rsplit(" ", 1)[1]) - 1]
                if test["kind"] == "property":
                    result["properties"] += 1
                    result["examples"] += len(test["examples"])
                else:
                    result["cases"] += 1
        else:
            result["answers"] += len(cases)
    return result


def checks_text(c: dict) -> str:
    return (f"{c['cases'] + c['examples'] + c['answers']} ({c['cases']} hidden test cases + {c['examples']} "
            f"property examples in {c['properties']} properties + {c['answers']} report answers)")


# --- main ----------------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds (medians are printed)")
    parser.add_argument("--otter", help=f"Otter's `otter` command or its python (default: ${OTTER_ENV}, else otter on PATH)")
    args = parser.parse_args()
    problem = otter_problem(args.otter)
    if problem:
        raise SystemExit(f"bench_vs_otter: {problem}")
    otter, interpreter = otter_command(args.otter)

    from autograder.build import write_reference_submission
    from bench_grading import busy_cores

    with tempfile.TemporaryDirectory(prefix="cs349e-bench-otter-") as tmp:
        tmp = Path(tmp)
        write_reference_submission(ASSIGNMENT, tmp / "reference")
        roster = make_class(tmp / "reference", tmp / "class", args.students)
        autograder, zipped_checks = build_otter_zip(tmp, roster, otter)
        zips = {}
        (tmp / "zips").mkdir()
        for sid in roster:
            zips[sid] = submission_zip(tmp / "class" / sid, tmp / "zips" / f"{sid}.zip")
        envs = {sid: otter_env(sid) for sid in roster}
        import pickle

        with open(tmp / "otter-source" / "otter_port_cases.pkl", "rb") as f:
            port_items = pickle.load(f)["items"]

        # untimed warm-up of each side on s000; what each checked there is counted
        first = next(iter(roster))
        (tmp / "warm-class").mkdir()
        shutil.copytree(tmp / "class" / first, tmp / "warm-class" / first)
        run_tree(kit_commands(tmp / "warm-class", tmp / "warm-kit", 1, tmp / "warm-kit.log"), 1, ROOT)
        warm_otter = tmp / "warm-otter"
        run_tree(otter_commands(otter, autograder, {first: zips[first]}, warm_otter, envs, pickle_results=True), 1,
                 warm_otter)
        kit_count = kit_checks(tmp / "warm-kit" / "results" / f"{first}.json")
        otter_count = otter_ran(interpreter, warm_otter / "results.pkl", zipped_checks, port_items)

        load_before, busy_before = os.getloadavg()[0], busy_cores()
        walls = {(side, w): [] for side in ("kit", "otter") for w in (1, 2)}
        cpus = {(side, w): [] for side in ("kit", "otter") for w in (1, 2)}
        gradings = []   # (round, workers, kit scores, otter scores)
        where = ""
        n = len(roster)
        for r in range(args.rounds):
            for workers in (1, 2):
                kit_out, otter_out = tmp / f"kit-{r}-{workers}", tmp / f"otter-{r}-{workers}"
                runs = {"kit": lambda: run_tree(kit_commands(tmp / "class", kit_out, workers, tmp / f"kit-{r}-{workers}.log"),
                                                1, ROOT),
                        "otter": lambda: run_tree(otter_commands(otter, autograder, zips, otter_out, envs), workers,
                                                  otter_out)}
                order = ["kit", "otter"] if (r + workers) % 2 == 0 else ["otter", "kit"]   # rotate who goes first
                for side in order:
                    wall, cpu, where = runs[side]()
                    walls[side, workers].append(wall / n)
                    cpus[side, workers].append(cpu / n)
                gradings.append((r, workers, kit_scores(kit_out), otter_scores(otter_out, roster)))
                shutil.rmtree(kit_out)
                shutil.rmtree(otter_out)
        load_after, busy_after = os.getloadavg()[0], busy_cores()

    def median(values):
        return statistics.median(values)

    print(f"{n} submissions of {ASSIGNMENT} (s000 the reference, each other student one seeded bug, each their own "
          f"variant), {args.rounds} alternating round(s), per submission, medians; load average {load_before:.1f} "
          f"before, {load_after:.1f} after, on {os.cpu_count()} cores; other processes kept {busy_before:.1f} / "
          f"{busy_after:.1f} cores busy (before / after); CPU of the whole process tree from {where}")
    print(f"  Otter: {' '.join(otter)} ({interpreter}), containerless `otter run`, grading in the student's kernel")
    print(f"\n  checks per submission: kit {checks_text(kit_count)}")
    print(f"                         Otter {checks_text(otter_count)}")
    print(f"                         {'equal' if kit_count == otter_count else 'NOT equal'}"
          f"{'' if zipped_checks == otter_count else f' (the zip declares {checks_text(zipped_checks)})'}")
    print(f"\n  {'':35} {'kit grade':>11} {'otter run':>11} {'Otter / kit':>11}")
    ratios = {}
    for workers, label in ((1, "serial (-j 1, one otter)"), (2, "2 workers (-j 2, two otters)")):
        for what, table in (("wall", walls), ("CPU", cpus)):
            kit, theirs = median(table["kit", workers]), median(table["otter", workers])
            ratios[workers, what] = theirs / kit
            print(f"  {label if what == 'wall' else '':30} {what:>4} {kit:9.2f} s {theirs:9.2f} s {theirs / kit:9.2f} x")
    for workers in (1, 2):
        print(f"  ratio Otter / kit at {workers} worker{'s' if workers > 1 else ''}: wall {ratios[workers, 'wall']:.2f} x, "
              f"CPU {ratios[workers, 'CPU']:.2f} x")
    print("  per round, seconds per submission (wall / CPU):")
    for r in range(args.rounds):
        print(f"    round {r + 1}: " + ", ".join(
            f"{label} {walls[side, w][r]:.2f} / {cpus[side, w][r]:.2f}"
            for w in (1, 2) for side, label in (("kit", f"kit -j {w}"), ("otter", f"otter x{w}"))))

    wrong = {}
    for r, workers, kit, theirs in gradings:
        for sid, item, a, b in disagreements(kit, theirs):
            wrong.setdefault((sid, item), []).append(f"round {r + 1} at {workers} worker(s): kit {a}, Otter {b}")
    agree = [sid for sid in roster if not any(s == sid for s, _ in wrong)]
    last_kit, last_otter = gradings[-1][2], gradings[-1][3]
    print(f"\n  automatic points (the last grading of each side):")
    print(f"  {'student':8} {'mutation':34} {'kit':>8} {'Otter':>8}")
    for sid, mutation in roster.items():
        a, b = sum(last_kit.get(sid, {}).values()), sum(last_otter.get(sid, {}).values())
        print(f"  {sid:8} {mutation or '(reference)':34} {a:8.2f} {b:8.2f}{'' if sid in agree else '  differs'}")
    print(f"\n  scores agree (every item within {TOLERANCE}, in all {len(gradings)} gradings of each side): "
          f"{len(agree)} / {n} students")
    for (sid, item), where_ in sorted(wrong.items()):
        print(f"    {sid} {item}: {'; '.join(where_)}")
    return 0 if len(agree) == n and kit_count == otter_count else 1


if __name__ == "__main__":
    sys.exit(main())
