"""One inbound submission folder as the instructor's `nbgrader list --inbound` shows it, read with bounds.

nbgrader 0.9.6's list (ExchangeList.parse_assignments) reads every folder's notebooks and
submission_secret.txt whole, through whatever is at their path, with no guard per folder: an empty
secret failed its assert, a FIFO named handout.ipynb blocked the listing forever, a sparse secret
of 4 GiB was read into memory, 4,000 sparse notebooks of 64 MiB took minutes and 30,000 empty ones
93 MiB. `listed_submission` computes what nbgrader computes for one submitted folder (its
notebooks, whether feedback was fetched, is ready or changed) with nbgrader's own names, keys and
hashes, but reads through a `FolderReads` of that folder: regular files only, never through a
link, a FIFO never waited on, at most LISTED_FOLDER_BYTES in all and LISTED_NOTEBOOKS notebooks.
Each folder's bounds live in its own FolderReads: listings run at once (threads of one
process) share nothing, and nothing of nbgrader's is replaced.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat

from nbgrader.utils import make_unique_key, notebook_hash, to_bytes

from autograder.nbgrader_bridge.inbound import SECRET_FILE

LISTED_FOLDER_BYTES = 64 << 20   # what the listing reads of one inbound folder in all (notebooks, secret, feedback)
LISTED_NOTEBOOKS = 100           # notebooks of one inbound folder the listing reads (the release has one)


class FolderReads:
    """What the listing reads of one inbound folder, at most LISTED_FOLDER_BYTES in all."""

    def __init__(self, limit: int = LISTED_FOLDER_BYTES):
        self.left = limit

    def read(self, path: str) -> bytes:
        """A regular file's bytes, opened without following a link and without waiting on a FIFO."""
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > self.left:
                raise OSError(f"{path}: no regular file, or past the {LISTED_FOLDER_BYTES >> 20} MiB list reads of a folder")
            data = handle.read(self.left + 1)
        if len(data) > self.left:
            raise OSError(f"{path} grew past the {LISTED_FOLDER_BYTES >> 20} MiB list reads of a folder")
        self.left -= len(data)
        return data

    def text(self, path: str) -> str:
        """A file as nbgrader's `open(path).read()` gives it (UTF-8, universal newlines)."""
        return io.TextIOWrapper(io.BytesIO(self.read(path)), encoding="utf-8").read()


def notebooks_in(folder: str) -> list[str]:
    """The folder's `*.ipynb`, as nbgrader's glob finds them (no hidden names), sorted; at most
    LISTED_NOTEBOOKS. The folder is listed as a folder, never as a pattern: a student's name with
    `*` or `[` in it matches nothing else."""
    found = []
    try:
        entries = os.scandir(folder)
    except NotADirectoryError:    # a file named like a submission: nbgrader lists it without notebooks
        return found
    with entries:
        for entry in entries:
            if entry.name.endswith(".ipynb") and not entry.name.startswith("."):
                found.append(entry.path)
                if len(found) > LISTED_NOTEBOOKS:
                    raise OSError(f"more than {LISTED_NOTEBOOKS} notebooks in {folder}")
    return sorted(found)


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def listed_submission(info: dict, assignment_dir: str, exchange_feedback: str, removed: bool, log) -> dict:
    """nbgrader's record of one inbound folder (`info` as its parse_assignment matched the name, with
    `path`), its files read within one FolderReads. `assignment_dir` is where the lister keeps fetched
    feedback, `exchange_feedback` the course's feedback folder in the exchange. Raises OSError,
    UnicodeDecodeError or AssertionError (an empty secret, as nbgrader's notebook_hash) for a folder
    it cannot read."""
    reads = FolderReads()
    path = info["path"]
    info["status"] = "removed" if removed else "submitted"
    notebooks = notebooks_in(path)
    if not notebooks:
        log.warning("No notebooks found in {}".format(path))
    secret = None
    secret_path = os.path.join(path, SECRET_FILE)
    info["notebooks"] = []
    for notebook in notebooks:
        nb_info = {"notebook_id": os.path.splitext(os.path.basename(notebook))[0], "path": os.path.abspath(notebook)}
        info["notebooks"].append(nb_info)
        if removed:
            continue
        local_feedback = os.path.join(assignment_dir, "feedback", info["timestamp"], f"{nb_info['notebook_id']}.html")
        has_local_feedback = os.path.isfile(local_feedback)
        local_checksum = _md5(reads.read(local_feedback)) if has_local_feedback else None

        if os.path.isfile(secret_path):     # the feedback's name: the secret's hash, else the notebook's
            if secret is None:
                secret = reads.text(secret_path)
            names = [notebook_hash(secret=secret, notebook_id=nb_info["notebook_id"])]
        else:
            unique_key = make_unique_key(info["course_id"], info["assignment_id"], nb_info["notebook_id"],
                                         info["student_id"], info["timestamp"])
            log.debug("Unique key is: {}".format(unique_key))
            legacy = hashlib.md5(reads.read(notebook))
            keyed = legacy.copy()
            keyed.update(to_bytes(unique_key))
            names = [keyed.hexdigest(), legacy.hexdigest()]   # then nbgrader's legacy name
        exchange_path = next((p for p in (os.path.join(exchange_feedback, f"{name}.html") for name in names)
                              if os.path.isfile(p)), None)
        has_exchange_feedback = exchange_path is not None
        exchange_checksum = _md5(reads.read(exchange_path)) if has_exchange_feedback else None

        nb_info.update(has_local_feedback=has_local_feedback, has_exchange_feedback=has_exchange_feedback,
                       local_feedback_path=local_feedback if has_local_feedback else None,
                       feedback_updated=has_local_feedback and has_exchange_feedback
                       and exchange_checksum != local_checksum)
    if not removed:
        _summarise_feedback(info, assignment_dir)
    return info


def _summarise_feedback(info: dict, assignment_dir: str) -> None:
    """The folder's feedback state from its notebooks', as nbgrader sums it up."""
    notebooks = info["notebooks"]
    info["has_local_feedback"] = bool(notebooks) and all(nb["has_local_feedback"] for nb in notebooks)
    info["has_exchange_feedback"] = bool(notebooks) and all(nb["has_exchange_feedback"] for nb in notebooks)
    info["feedback_updated"] = any(nb["feedback_updated"] for nb in notebooks)
    info["local_feedback_path"] = None
    if info["has_local_feedback"]:
        full = os.path.abspath(assignment_dir)
        info["local_feedback_path"] = os.path.join(full if os.path.exists(full) else assignment_dir,
                                                   "feedback", info["timestamp"])
