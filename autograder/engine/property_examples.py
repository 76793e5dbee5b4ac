"""The examples of an assignment's hypothesis properties, fixed in a versioned file.

Which examples hypothesis draws depends on the process drawing them (it mixes constants found in
every module imported so far into its choices), so examples drawn at grading time differ between
commands. Instead `python -m autograder build <assignment>` draws them once, in a fresh
interpreter that imports only the hidden tests, with a fixed seed per property, and writes them
to autograder/<assignment>/property_examples.json. Every grading process reads that file: the
examples that count toward a score are data, the same in every command, process and machine.

The file records a digest of the sources that define the properties (the hidden-test package and
the shared modules grading.toml declares); grading refuses a file whose digest does not match the sources on disk, and
`build --check` reports it. A current file is never redrawn: it is the case set.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from autograder.engine.cases import Property
from autograder.engine.registry import REPO_ROOT, ConfigError, load_config
from autograder.sandbox.codec import Rebuilt

FORMAT = 1
SEED = 349  # the course number: every property's seed derives from it, its function and its label
FILE_NAME = "property_examples.json"

Key = tuple[str, str]  # (function, property label)


def hidden_tests_folder(assignment: str) -> Path:
    """The folder of the hidden-test package `autograder.<assignment>` (wherever it is installed)."""
    spec = importlib.util.find_spec(f"autograder.{assignment}")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"no hidden tests for {assignment!r}: autograder/{assignment}/ is missing")
    return Path(next(iter(spec.submodule_search_locations)))


def examples_file(assignment: str) -> Path:
    return hidden_tests_folder(assignment) / FILE_NAME


def property_seed(prop: Property) -> int:
    text = f"{SEED}:{prop.function}:{prop.label}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


def sources_digest(assignment: str) -> str:
    """sha256 of everything that defines the properties' strategies."""
    package = hidden_tests_folder(assignment)
    files = {f"autograder/{assignment}/{p.relative_to(package).as_posix()}": p
             for p in sorted(package.rglob("*.py")) if "__pycache__" not in p.parts}
    shared = load_config(assignment).shared_modules  # modules outside the package its strategies may use
    files.update({name: REPO_ROOT / name for name in shared if (REPO_ROOT / name).is_file()})
    h = hashlib.sha256(f"format {FORMAT} seed {SEED}\0".encode())
    for name, path in files.items():
        h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


# --- drawing (in a fresh interpreter only) -------------------------------------------------------
def run_hypothesis(prop: Property, phases: tuple, on_example: Callable[[tuple], None],
                   max_examples: int | None = None) -> None:
    """Run hypothesis over the property's strategy with the property's own seed (public API only).
    Without local constants: which kit modules a process has imported, and from where it runs (a
    cluster worker, a course copy), must not steer the search or its shrinking."""
    from hypothesis import HealthCheck, Verbosity, given, seed, settings

    _without_local_constants()

    config = settings(derandomize=False, database=None, max_examples=max_examples or prop.max_examples,
                      deadline=None, phases=phases, suppress_health_check=list(HealthCheck),
                      verbosity=Verbosity.quiet, print_blob=False, report_multiple_bugs=False)

    def property_example(args):
        on_example(args)

    seed(property_seed(prop))(config(given(prop.strategy)(property_example)))()


def draw(prop: Property) -> list[tuple]:
    """The property's examples, duplicates dropped, in the order hypothesis drew them."""
    from hypothesis import Phase

    from autograder.engine.properties import example_key

    seen: dict[bytes, tuple] = {}
    run_hypothesis(prop, (Phase.generate,), lambda args: seen.setdefault(example_key(args), args))
    return list(seen.values())


def _without_local_constants() -> None:
    """hypothesis also mixes into its draws the literals of every local module imported so far
    (the engine's, the sandbox's, the reference's), so a number added anywhere in the kit would
    change the case set. Here the examples depend on the strategies and seeds alone. (An internal
    of hypothesis: the file records hypothesis's version, and another version may draw anew.)"""
    from hypothesis.internal.conjecture import providers

    if hasattr(providers, "_get_local_constants"):
        empty = type(providers._local_constants)(
            integers=providers.SortedSet(), floats=providers.SortedSet(key=providers.float_to_int),
            bytes=providers.SortedSet(), strings=providers.SortedSet())
        providers._get_local_constants = lambda: empty


def generate(assignment: str) -> str:
    """The file's text for `assignment`, drawn in this process (see generate_in_fresh_process)."""
    import hypothesis

    from autograder.engine.assignment import hidden_suites

    _without_local_constants()

    header = {"format": FORMAT, "assignment": assignment, "seed": SEED,
              "sources": sources_digest(assignment), "hypothesis": hypothesis.__version__}
    lines = ["{" + json.dumps(header)[1:-1] + ', "properties": [']
    props = [prop for suite in hidden_suites(assignment).values() for prop in suite.properties]
    for n, prop in enumerate(props):
        head = {"function": prop.function, "label": prop.label, "max_examples": prop.max_examples}
        lines.append(" {" + json.dumps(head, ensure_ascii=False)[1:-1] + ', "examples": [')
        examples = [json.dumps(encode(args), ensure_ascii=False, separators=(",", ":")) for args in draw(prop)]
        lines.append(",\n".join(f"  {e}" for e in examples))
        lines.append(" ]}" + ("," if n < len(props) - 1 else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def generate_in_fresh_process(assignment: str) -> str:
    """Draw in a new interpreter that imports only what the hidden tests need."""
    with tempfile.TemporaryDirectory(prefix="cs349e-draw-") as storage:  # hypothesis's caches, not the repo's
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONHASHSEED": "0",
               "HYPOTHESIS_STORAGE_DIRECTORY": storage}
        done = subprocess.run([sys.executable, "-m", __name__, assignment], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, encoding="utf-8")
    if done.returncode != 0:
        raise ConfigError(f"drawing the property examples of {assignment!r} failed:\n{done.stderr.strip()}")
    return done.stdout


def write(assignment: str, *, check: bool = False) -> list[str]:
    """Draw and write the file when the sources changed since it was drawn (with check=True only
    say so); returns its repository path if it is (or was) out of date. A current file is kept
    as it is: it *is* the case set, whatever a new draw would give."""
    path = examples_file(assignment)
    if _recorded_sources(path) == sources_digest(assignment):
        return []
    if not check:
        path.write_text(generate_in_fresh_process(assignment), encoding="utf-8")
    return [_shown(path)]


def _shown(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else str(path)


def _recorded_sources(path: Path) -> str | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc.get("sources") if isinstance(doc, dict) and doc.get("format") == FORMAT else None


# --- reading (every grading process) ------------------------------------------------------------
def load(assignment: str, properties: Iterable[Property]) -> dict[Key, tuple[tuple, ...]]:
    """The fixed examples of every property; ConfigError if the file is missing, stale or incomplete."""
    path = examples_file(assignment)
    rebuild = f"run `python -m autograder build {assignment}` and commit {_shown(path)}"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path} not found: {rebuild}") from None
    except (OSError, ValueError) as err:
        raise ConfigError(f"{path}: unreadable ({err}): {rebuild}") from None
    if doc.get("format") != FORMAT or doc.get("assignment") != assignment:
        raise ConfigError(f"{path}: format {doc.get('format')!r} of {doc.get('assignment')!r}, "
                          f"expected format {FORMAT} of {assignment!r}: {rebuild}")
    if doc.get("sources") != sources_digest(assignment):
        raise ConfigError(f"{path} is stale: the hidden tests (autograder/{assignment}/, "
                          f"{', '.join(load_config(assignment).shared_modules)}) changed since it was drawn: "
                          f"{rebuild}")
    stored = {(p["function"], p["label"]): p for p in doc["properties"]}
    fixed = {}
    for prop in properties:
        entry = stored.get((prop.function, prop.label))
        if entry is None or entry["max_examples"] != prop.max_examples or not entry["examples"]:
            raise ConfigError(f"{path} has no examples for the {prop.function} property {prop.label!r}: {rebuild}")
        fixed[(prop.function, prop.label)] = tuple(decode(e) for e in entry["examples"])
    return fixed


# --- plain JSON for example values -------------------------------------------------------------
def encode(value: Any) -> Any:
    """JSON for an example: floats are written in their shortest round-trip form (exact)."""
    if isinstance(value, np.generic):  # before float: np.float64 is a float
        return {"scalar": {"dtype": value.dtype.str, "value": value.item()}}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"cannot store an array of dtype {value.dtype}")
        return {"ndarray": {"dtype": value.dtype.str, "shape": list(value.shape), "data": value.ravel().tolist()}}
    if isinstance(value, Rebuilt):   # its class too: an assignment may subclass Rebuilt
        kind = type(value)
        return {"rebuilt": {"type": f"{kind.__module__}:{kind.__qualname__}", "factory": value.factory,
                            "data": encode(value.data)}}
    if isinstance(value, Mapping):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(f"cannot store a {type(value).__name__} in the property examples")


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    (tag, body), = value.items()
    if tag == "tuple":
        return tuple(decode(v) for v in body)
    if tag == "ndarray":
        return np.array(body["data"], dtype=np.dtype(body["dtype"])).reshape(body["shape"])
    if tag == "scalar":
        return np.dtype(body["dtype"]).type(body["value"])
    if tag == "rebuilt":
        return _rebuilt(body["type"], body["factory"], decode(body["data"]))
    if tag == "dict":
        return {decode(k): decode(v) for k, v in body}
    raise ValueError(f"unknown tag {tag!r} in the property examples")


def _rebuilt(type_name: str, factory: str, data: Any) -> Rebuilt:
    """A Rebuilt of the recorded class (Rebuilt itself or a subclass in the hidden tests)."""
    module_name, _, qualname = type_name.partition(":")
    kind: Any = Rebuilt
    if module_name.startswith("autograder."):
        kind = importlib.import_module(module_name)
        for part in qualname.split("."):
            kind = getattr(kind, part)
    if not (isinstance(kind, type) and issubclass(kind, Rebuilt)):
        raise ValueError(f"{type_name!r} in the property examples is not a Rebuilt type")
    value = object.__new__(kind)
    object.__setattr__(value, "factory", factory)
    object.__setattr__(value, "data", data)
    return value


if __name__ == "__main__":
    sys.stdout.write(generate(sys.argv[1]))
