"""`python -m autograder <verb> ...`: one module per verb in autograder/commands/.

Each verb module exposes `add_parser(subparsers) -> None` (registers its sub-command) and
`run(args) -> int` (the exit status). Verb modules are thin: they import their implementation
inside `run`, so `--help` stays fast and one broken verb does not take the others down.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil

from autograder import commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder",
                                     description="CS349E exercise kit: build, grade and release assignments.")
    subparsers = parser.add_subparsers(dest="verb", required=True, metavar="<verb>")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        before = set(subparsers.choices)
        module.add_parser(subparsers)
        for verb in set(subparsers.choices) - before:
            subparsers.choices[verb].set_defaults(_command=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args._command.run(args)
