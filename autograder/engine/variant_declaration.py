"""Whether an assignment declares per-student variants (`solutions/<name>/variants.py`), and the
one text form of a parameter set. The assignment's loader needs both; variants.py, which draws a
student's parameters and looks up their keys, builds on the loader, so these sit below both."""

from __future__ import annotations

import importlib
import json
from types import ModuleType
from typing import Any, Mapping


def variants_module(name: str) -> ModuleType | None:
    """`solutions.<name>.variants`, or None when the assignment declares no variants."""
    try:
        return importlib.import_module(f"solutions.{name}.variants")
    except ModuleNotFoundError as err:
        if err.name in (f"solutions.{name}.variants", f"solutions.{name}", "solutions"):
            return None
        raise


def has_variants(name: str) -> bool:
    return variants_module(name) is not None


def canonical_json(params: Mapping[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
