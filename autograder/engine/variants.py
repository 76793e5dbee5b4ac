"""Per-student variants: every student's numbers are drawn for them, from a seed students never see.

An assignment declares variants with `solutions/<name>/variants.py`:
    variant(rng: numpy.random.Generator) -> dict   the parameters its questions depend on
                                                   (JSON-plain: ints, floats, strings, lists)
    LECTURE: dict                                  the lecture's own worked example: used where
                                                   no student is known (released solutions, docs)
and its hidden-test package's `answer_key(params=None)` computes the keys for one parameter set.

A student's parameters are a pure function of the assignment's secret seed
(`autograder/<name>/variant_seed`, instructor-only) and the student id, so the trusted grader, the
Gradescope bundle (which carries the seed) and `variant` always agree, and no released file lets a
student compute a classmate's parameters or anyone's keys. Without variants.py nothing changes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping

import numpy as np

from autograder.engine.assignment import load_assignment
from autograder.engine.registry import REPO_ROOT, ConfigError
from autograder.engine.variant_declaration import canonical_json, has_variants, variants_module

SEED_FILE = "variant_seed"
TABLE_FILE = "variants.json"  # the released parameter table, assignments/<name>/variants.json
HELPER_FILE = "variant.py"  # the released helper that reads it
_SEED_HEX = re.compile(r"[0-9a-f]{64}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_ID_LENGTH = 200


class StudentIdError(ValueError):
    """A student id that cannot name a variant (empty, control characters, too long)."""


def _module(name: str) -> ModuleType:
    module = variants_module(name)
    if module is None:
        raise ConfigError(f"{name} has no variants: solutions/{name}/variants.py does not exist")
    if not callable(getattr(module, "variant", None)) or not isinstance(getattr(module, "LECTURE", None), dict):
        raise ConfigError(f"solutions/{name}/variants.py must define variant(rng) -> dict and LECTURE: dict")
    return module


def normalize_id(student_id: str) -> str:
    """The id as the variant is drawn from: surrounding spaces stripped, case kept."""
    if not isinstance(student_id, str):
        raise StudentIdError(f"a student id is text, got {type(student_id).__name__}")
    text = student_id.strip()
    if not text:
        raise StudentIdError("the student id is empty")
    if _CONTROL.search(text):
        raise StudentIdError(f"the student id {text!r} contains control characters")
    if len(text) > MAX_ID_LENGTH:
        raise StudentIdError(f"the student id is {len(text)} characters long (at most {MAX_ID_LENGTH})")
    return text


def seed_path(name: str, root: Path = REPO_ROOT) -> Path:
    return root / "autograder" / name / SEED_FILE


def new_seed(name: str, root: Path = REPO_ROOT) -> Path:
    """Write a fresh seed for `name` unless one exists (an existing seed is never replaced: every
    student's numbers would change). Returns its path."""
    path = seed_path(name, root)
    if not path.exists():
        path.write_text(secrets.token_hex(32) + "\n", encoding="ascii")
    return path


def read_seed(name: str, root: Path = REPO_ROOT) -> bytes:
    path = seed_path(name, root)
    if not path.is_file():
        raise ConfigError(f"{path} is missing: `python -m autograder build {name}` creates it (keep it private; "
                          f"replacing it changes every student's numbers)")
    text = path.read_text(encoding="ascii", errors="replace").strip()
    if not _SEED_HEX.fullmatch(text):
        raise ConfigError(f"{path} must hold one line of 64 lowercase hex digits (32 random bytes)")
    return bytes.fromhex(text)


def plain(params: Any, where: str) -> dict:
    """`params` as JSON gives it back (tuples become lists, numpy scalars are refused by name)."""
    if not isinstance(params, dict):
        raise ConfigError(f"{where}: parameters must be a dict, got {type(params).__name__}")
    try:
        return json.loads(canonical_json(params))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: parameters must be JSON-plain (ints, floats, strings, lists): {exc}") from None


def variant_digest(params: Mapping[str, Any]) -> str:
    """Names one parameter set in results: sha256 of its canonical JSON, first 12 hex digits."""
    return hashlib.sha256(canonical_json(params).encode()).hexdigest()[:12]


def lecture_params(name: str) -> dict:
    return plain(_module(name).LECTURE, f"solutions/{name}/variants.py LECTURE")


def params_for(name: str, student_id: str) -> dict:
    """The parameters of `student_id`'s variant of `name`."""
    module = _module(name)
    sid = normalize_id(student_id)
    seed = read_seed(name)

    def draw() -> dict:
        mac = hmac.new(seed, f"{name}:{sid}".encode(), hashlib.sha256).digest()
        rng = np.random.default_rng(int.from_bytes(mac, "big"))
        return plain(module.variant(rng), f"solutions/{name}/variants.py variant()")

    from autograder.engine.key_cache import cached_params   # drawn once for every process

    # the store's folder follows the seed file; the entry follows the seed actually read, so a seed
    # given in-process (a test's class, an instructor trying one) never gets another seed's draw
    entry = f"{sid}\0seed {hashlib.sha256(seed).hexdigest()[:16]}"
    return plain(cached_params(name, entry, draw), f"the stored variant of {sid!r}")


def params_of(name: str, student_id: str | None) -> dict | None:
    """The student's parameters; LECTURE when no student is known; None without variants."""
    if not has_variants(name):
        return None
    return lecture_params(name) if student_id is None else params_for(name, student_id)


def keys_for(name: str, student_id: str | None) -> Mapping[str, Any]:
    """The answer keys of `student_id`'s variant (None: the lecture's; an assignment without
    variants: its one key for everybody)."""
    return load_assignment(name).key_for(params_of(name, student_id))


TOKEN_CHARS = 16   # base32: 80 bits, typed as four groups of four
TOKEN_ENV = "CS349E_VARIANT_TOKEN"   # a JupyterHub spawner may hand each student theirs


def variant_token(name: str, student_id: str, root: Path = REPO_ROOT) -> str:
    """The student's personal token for `name` (e.g. "K7QX-2MBD-…"): HMAC of the id with the
    assignment's secret seed. Only the instructor can compute it; the student is given theirs."""
    mac = hmac.new(read_seed(name, root), f"token:{name}:{normalize_id(student_id)}".encode(), hashlib.sha256)
    text = base64.b32encode(mac.digest()).decode()[:TOKEN_CHARS]
    return "-".join(text[i:i + 4] for i in range(0, TOKEN_CHARS, 4))


def normalize_token(token: str) -> str:
    """As typed, any case, with or without dashes and spaces: the 16 base32 characters."""
    return re.sub(r"[^A-Z2-7]", "", str(token).upper())


def table_key(name: str, student_id: str, token: str) -> str:
    """How the released table names a student's entry: HMAC of the id keyed by their token, so that
    knowing an id (or the whole class list) is not enough to find anyone's entry."""
    key = normalize_token(token).encode()
    return hmac.new(key, f"{name}:{normalize_id(student_id)}".encode(), hashlib.sha256).hexdigest()[:24]


def samples(name: str, n: int) -> list[tuple[str, dict]]:
    """(label, parameters) of `n` variants for an author's checks: the lecture's own first, then
    the students "check-1", "check-2", … (drawn like any student's, from the seed)."""
    drawn = [("LECTURE", lecture_params(name))] if n > 0 else []
    return drawn + [(sid, params_for(name, sid)) for sid in (f"check-{i}" for i in range(1, n))]
