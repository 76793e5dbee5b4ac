"""Writing a file so that a reader finds the old file or the whole new one, never a part of it,
even when the writer is killed or the machine stops: the data goes into a temporary file beside
the target, reaches the disk (fsync), and is then renamed over it. Every file the grader writes
for someone else to read (results, feedback, grades.csv, Gradescope's results.json, the bundle,
the shared font list) goes through here."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator


@contextlib.contextmanager
def atomic_file(path: Path, mode: str = "w", *, permissions: int | None = None) -> Iterator[IO]:
    """A file to write `path` through ("w": UTF-8 text, newlines as written; "wb": bytes). It
    replaces `path` only once complete and on disk; until then, and if anything fails, `path`
    is what it was. The new file has mode 0600 unless `permissions` says otherwise."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_file writes with mode 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        text = {} if "b" in mode else {"encoding": "utf-8", "newline": ""}
        with os.fdopen(fd, mode, **text) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if permissions is not None:
            os.chmod(tmp, permissions)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str, *, permissions: int | None = None) -> None:
    with atomic_file(path, permissions=permissions) as handle:
        handle.write(text)


def atomic_write_bytes(path: Path, data: bytes, *, permissions: int | None = None) -> None:
    with atomic_file(path, "wb", permissions=permissions) as handle:
        handle.write(data)
