"""Load an assignment: its trusted grading.toml and its hidden-test package `autograder.<name>`.

A hidden-test package `autograder/<name>/` provides two functions:
`function_suites() -> {item id: Suite}` for every function item, and
`answer_key() -> {item id: number | letter}` for every number / choice item.
Adding an assignment is one more such package; the engine does not change.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from autograder.engine.cases import Suite
from autograder.engine.checks import is_real_number
from autograder.engine.properties import examples_of
from autograder.engine.registry import ConfigError, GradingConfig, load_config
from autograder.engine.vocabulary import KEYED_KINDS, ItemKind


@dataclass(frozen=True)
class Assignment:
    config: GradingConfig
    suites: Mapping[str, Suite]
    answer_key: Mapping[str, Any]


@lru_cache(maxsize=None)
def load_assignment(name: str) -> Assignment:
    config = load_config(name)
    try:
        package = importlib.import_module(f"autograder.{name}")
    except ModuleNotFoundError as err:
        if err.name and err.name.startswith(f"autograder.{name}"):
            raise ConfigError(f"no hidden tests for {name!r}: autograder/{name}/ is missing") from None
        raise
    function_items = config.items_of(ItemKind.FUNCTION)
    suites = dict(package.function_suites()) if function_items else {}
    missing = [item.id for item in function_items if item.id not in suites]
    if missing:
        raise ConfigError(f"autograder/{name}: no hidden tests for function items {missing}")
    if config.student_module is None and function_items:
        raise ConfigError(f"{name}: function items need a .py file in student_files")

    answered = config.items_of(*KEYED_KINDS)
    key = dict(package.answer_key()) if answered else {}
    for item in answered:
        if item.id not in key:
            raise ConfigError(f"{name}: the answer key has no entry for {item.id}")
        value = key[item.id]
        if item.kind is ItemKind.NUMBER and not is_real_number(value):
            raise ConfigError(f"{name}: the key of number item {item.id} is {value!r}, not a number")
        if item.kind is ItemKind.CHOICE and value not in item.choices:
            raise ConfigError(f"{name}: the key of choice item {item.id} is {value!r}, not one of {item.choices}")
    if answered and config.notebook is None:
        raise ConfigError(f"{name}: report items need a .ipynb file in student_files")
    return Assignment(config, suites, key)


def warm(name: str) -> Assignment:
    """Load the assignment and draw every property's examples now, so worker processes forked
    afterwards inherit them instead of drawing them again."""
    assignment = load_assignment(name)
    for suite in assignment.suites.values():
        for prop in suite.properties:
            examples_of(prop)
    return assignment
