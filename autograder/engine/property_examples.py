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

This module locates, reads and encodes the file (every grading process); property_draw.py draws
it (the build only), property_run.py runs hypothesis for both the draw and the grader's shrinking.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
from pathlib import Path
from typing import Any, Iterable, Mapping

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


def shown(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else str(path)


def recorded_sources(path: Path) -> str | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc.get("sources") if isinstance(doc, dict) and doc.get("format") == FORMAT else None


# --- reading (every grading process) ------------------------------------------------------------
def load(assignment: str, properties: Iterable[Property]) -> dict[Key, tuple[tuple, ...]]:
    """The fixed examples of every property; ConfigError if the file is missing, stale or incomplete."""
    path = examples_file(assignment)
    rebuild = f"run `python -m autograder build {assignment}` and commit {shown(path)}"
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
