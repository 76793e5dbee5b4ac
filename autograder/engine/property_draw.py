"""Drawing an assignment's property examples: `python -m autograder build <assignment>` runs this
module in a fresh interpreter that imports only the hidden tests (see property_examples.py for
why), and writes what it prints to autograder/<assignment>/property_examples.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from autograder.engine.assignment import hidden_suites
from autograder.engine.cases import Property
from autograder.engine.properties import example_key
from autograder.engine.property_examples import (FORMAT, SEED, encode, examples_file, recorded_sources, shown,
                                                 sources_digest)
from autograder.engine.property_run import without_local_constants, run_hypothesis
from autograder.engine.registry import REPO_ROOT, ConfigError


def draw(prop: Property) -> list[tuple]:
    """The property's examples, duplicates dropped, in the order hypothesis drew them."""
    from hypothesis import Phase

    seen: dict[bytes, tuple] = {}
    run_hypothesis(prop, (Phase.generate,), lambda args: seen.setdefault(example_key(args), args))
    return list(seen.values())


def generate(assignment: str) -> str:
    """The file's text for `assignment`, drawn in this process (see generate_in_fresh_process)."""
    import hypothesis

    without_local_constants()

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
    if recorded_sources(path) == sources_digest(assignment):
        return []
    if not check:
        path.write_text(generate_in_fresh_process(assignment), encoding="utf-8")
    return [shown(path)]


if __name__ == "__main__":
    sys.stdout.write(generate(sys.argv[1]))
