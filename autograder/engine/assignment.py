"""Load an assignment: its trusted grading.toml and its hidden-test package `autograder.<name>`.

A hidden-test package `autograder/<name>/` provides two functions:
`function_suites() -> {item id: Suite}` for every function item, and
`answer_key() -> {item id: number | letter}` for every number / choice item (a number item whose
answer depends on the student's machine may have a MeasuredKey or DerivedKey, see
autograder.engine.answer_checks); an assignment with per-student variants
(solutions/<name>/variants.py, see autograder.engine.variants) has `answer_key(params=None)`,
the keys of one variant (None: the lecture's own), optionally `key_checks()`: the keys that are
checks rather than values (MeasuredKey, DerivedKey), the same in every variant, so that the other
keys can be computed once and stored for every process (autograder.engine.key_cache), and optionally
`sandbox_factories() -> ("module:Class.method", ...)`: the only callables the sandbox may use
to rebuild an argument that is not plain data (see autograder.sandbox.codec.Rebuilt), and
`sandbox_reference() -> "module:function"`: a function of a trusted file of the assignment folder
that measures the grading machine in the sandbox (plain data by name) for its ReferenceKeys.
Adding an assignment is one more such package; the engine does not change.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Mapping

from autograder.engine import property_examples
from autograder.engine.answer_checks import DerivedKey, MeasuredKey, ReferenceKey
from autograder.engine.case_digest import case_set_digest
from autograder.engine.cases import Suite
from autograder.engine.checks import is_real_number
from autograder.engine.registry import ConfigError, GradingConfig, load_config
from autograder.engine.variant_declaration import canonical_json, has_variants
from autograder.engine.vocabulary import KEYED_KINDS, ItemKind
from autograder.sandbox.codec import check_factory_name


@dataclass(frozen=True)
class Assignment:
    config: GradingConfig
    suites: Mapping[str, Suite]  # every property carries its fixed examples
    answer_key: Mapping[str, Any]
    case_set: str = ""  # digest of every case and property example (case_digest.py)
    factories: tuple[str, ...] = ()  # sandbox_factories() of the hidden-test package
    variants: bool = False  # solutions/<name>/variants.py exists: keys differ per student
    reference: str = ""  # sandbox_reference(): "module:function" measuring the machine for ReferenceKeys

    def key_for(self, params: Mapping[str, Any] | None) -> Mapping[str, Any]:
        """The keys of one variant's parameters (None: `answer_key`, the lecture's own)."""
        if params is None:
            return self.answer_key
        if not self.variants:
            raise ConfigError(f"{self.config.assignment} has no variants: its keys take no parameters")
        return _variant_key(self.config.assignment, canonical_json(params))


def _package(name: str):
    try:
        return importlib.import_module(f"autograder.{name}")
    except ModuleNotFoundError as err:
        if err.name and err.name.startswith(f"autograder.{name}"):
            raise ConfigError(f"no hidden tests for {name!r}: autograder/{name}/ is missing") from None
        raise


def hidden_suites(name: str) -> dict[str, Suite]:
    """The hidden-test package's suites as it defines them (properties without examples)."""
    return dict(_package(name).function_suites())


def _with_fixed_examples(name: str, suites: Mapping[str, Suite]) -> dict[str, Suite]:
    props = [prop for suite in suites.values() for prop in suite.properties]
    if not props:
        return dict(suites)
    fixed = property_examples.load(name, props)
    return {function: replace(suite, properties=tuple(replace(p, examples=fixed[(p.function, p.label)])
                                                      for p in suite.properties))
            for function, suite in suites.items()}


@lru_cache(maxsize=None)
def load_assignment(name: str) -> Assignment:
    config = load_config(name)
    package = _package(name)
    function_items = config.items_of(ItemKind.FUNCTION)
    suites = _with_fixed_examples(name, package.function_suites()) if function_items else {}
    missing = [item.id for item in function_items if item.id not in suites]
    if missing:
        raise ConfigError(f"autograder/{name}: no hidden tests for function items {missing}")
    if config.student_module is None and function_items:
        raise ConfigError(f"{name}: function items need a .py file in student_files")

    key = _checked_key(config, _stored_key(name, package, None) if config.items_of(*KEYED_KINDS) else {})
    if answered_without_notebook(config):
        raise ConfigError(f"{name}: report items need a .ipynb file in student_files")
    factories = tuple(getattr(package, "sandbox_factories", tuple)())
    for factory in factories:
        try:
            check_factory_name(factory)
        except ValueError as exc:
            raise ConfigError(f"autograder/{name}: sandbox_factories(): {exc}") from None
    reference = str(getattr(package, "sandbox_reference", str)())
    if reference:
        try:
            check_factory_name(reference)
        except ValueError as exc:
            raise ConfigError(f"autograder/{name}: sandbox_reference(): {exc}") from None
    if any(isinstance(v, ReferenceKey) for v in key.values()) and not reference:
        raise ConfigError(f"autograder/{name}: ReferenceKeys need sandbox_reference(), the measurement they compare with")
    return Assignment(config, suites, key, case_set_digest(suites), factories, has_variants(name), reference)


def answered_without_notebook(config: GradingConfig) -> bool:
    return bool(config.items_of(*KEYED_KINDS)) and config.notebook is None


@lru_cache(maxsize=4096)  # one entry per student of a class: grading a class computes each key once
def _variant_key(name: str, params_json: str) -> Mapping[str, Any]:
    import json

    package, config = _package(name), load_assignment(name).config
    if not config.items_of(*KEYED_KINDS):
        return {}
    return _checked_key(config, _stored_key(name, package, params_json))


def _stored_key(name: str, package, params_json: str | None) -> Mapping[str, Any]:
    """The package's key for these parameters (None: its default), computed once for every process
    (key_cache.py); `key_checks()`, where the package has it, gives the keys that are checks."""
    import json

    from autograder.engine.key_cache import cached_key

    def compute():
        return package.answer_key() if params_json is None else package.answer_key(json.loads(params_json))

    return cached_key(name, params_json, compute, getattr(package, "key_checks", None))


def _checked_key(config: GradingConfig, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The package's key, checked against grading.toml's number and choice items."""
    name, answered = config.assignment, config.items_of(*KEYED_KINDS)
    key = dict(raw)
    expected, found = sorted(item.id for item in answered), sorted(key)
    if set(found) != set(expected):
        raise ConfigError(f"{name}: answer_key() returns the keys {found}, grading.toml's number and choice "
                          f"items are {expected} (missing {sorted(set(expected) - set(found))}, "
                          f"not an item {sorted(set(found) - set(expected))})")
    for item in answered:
        value = key[item.id]
        if isinstance(value, DerivedKey) and not set(value.needs) <= {i.id for i in config.items_of(ItemKind.NUMBER)}:
            raise ConfigError(f"{name}: the key of {item.id} is derived from {value.needs}, not all number items")
        if item.kind is ItemKind.NUMBER and not (is_real_number(value) or isinstance(value, (MeasuredKey, DerivedKey, ReferenceKey))):
            raise ConfigError(f"{name}: the key of number item {item.id} is {value!r}, not a number")
        if item.kind is ItemKind.CHOICE and value not in item.choices:
            raise ConfigError(f"{name}: the key of choice item {item.id} is {value!r}, not one of {item.choices}")
    return key


def warm(name: str) -> Assignment:
    """Load the assignment now (hidden cases, fixed property examples, answer key, which cases a
    stub's own input answers), so worker processes forked afterwards inherit it instead of
    loading it again."""
    from autograder.engine.function_items import input_is_answer

    assignment = load_assignment(name)
    for suite in assignment.suites.values():
        input_is_answer(suite)
    return assignment
