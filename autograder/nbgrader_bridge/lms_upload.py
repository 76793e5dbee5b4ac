"""One student's upload in an LMS download, checked before any of it is written.

An upload is a file the LMS put in the download (`amy_1001_2001_codesign.py`, `amy_lec01.zip`).
Which student it belongs to is read from that name alone (see collect.py); whatever the student
packed inside an archive is only ever their own files. An archive is listed first and refused as
a whole (UploadRefused, with the reason) if any entry could harm the instructor's machine or
make the collection ambiguous; only then is it unpacked, entry by entry, with the same caps.
No nbgrader import: the checks are plain zipfile/tarfile work.
"""

from __future__ import annotations

import lzma
import os
import re
import shutil
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# Names inside an archive that are not the student's work: never unpacked, never collected.
IGNORED_FOLDERS = ("__MACOSX",)
# An archive inside an upload: it would be unpacked blind (a zip bomb's usual shape), so refused.
ARCHIVE_SUFFIXES = (".zip", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar")
RESUBMISSION_COUNTER = re.compile(r"-\d+(?=\.(?:ipynb|py)$)")   # Canvas: handout-1.ipynb
CHUNK = 1 << 16


class UploadRefused(Exception):
    """The upload is not collected; the message says why (instructor-facing)."""


@dataclass(frozen=True)
class Limits:
    max_bytes: int          # everything an upload unpacks to
    max_entries: int        # files and folders in one archive


@dataclass(frozen=True)
class Entry:
    """A regular file of an upload: its path inside the archive (POSIX parts), its size."""
    parts: tuple[str, ...]
    size: int

    @property
    def name(self) -> str:
        return "/".join(self.parts)

    @property
    def ignored(self) -> bool:
        """Hidden files and folders, macOS resource forks: not the student's work."""
        return any(p.startswith(".") or p in IGNORED_FOLDERS for p in self.parts)


def collected_name(file_name: str) -> str:
    """The name a file is collected under: Canvas's resubmission counter dropped."""
    return RESUBMISSION_COUNTER.sub("", file_name)


def is_archive(name: str, suffixes) -> bool:
    return name.lower().endswith(tuple(suffixes))


def _entry_parts(raw: str) -> tuple[str, ...]:
    """The path of an archive entry as parts; refuses absolute paths and `..`."""
    name = raw.replace("\\", "/")   # zips made on Windows
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise UploadRefused(f"entry {raw!r} has an absolute path")
    parts = tuple(p for p in PurePosixPath(name).parts if p not in ("", "."))
    if ".." in parts:
        raise UploadRefused(f"entry {raw!r} points outside its folder (..)")
    return parts


def _check_entry(parts: tuple[str, ...], raw: str, collect_folder: str) -> None:
    if collect_folder in parts[:-1] or (parts and parts[-1] == collect_folder):
        raise UploadRefused(f"entry {raw!r} is in a folder named {collect_folder}/, the collector's own "
                            "folder name (an upload imitating another student's files)")


def _zip_entries(archive: zipfile.ZipFile, limits: Limits, collect_folder: str):
    infos = archive.infolist()
    if len(infos) > limits.max_entries:
        raise UploadRefused(f"holds {len(infos)} entries, more than {limits.max_entries}")
    for info in infos:
        parts = _entry_parts(info.filename)
        _check_entry(parts, info.filename, collect_folder)
        kind = (info.external_attr >> 16) & 0o170000 if info.create_system == 3 else 0   # unix mode bits
        if kind == 0o120000:
            raise UploadRefused(f"entry {info.filename!r} is a symbolic link")
        if kind not in (0, 0o100000, 0o040000):
            raise UploadRefused(f"entry {info.filename!r} is a special file")
        if info.flag_bits & 0x1:
            raise UploadRefused(f"entry {info.filename!r} is encrypted")
        if not info.is_dir() and kind != 0o040000 and parts:
            yield Entry(parts, info.file_size), info


def _tar_entries(archive: tarfile.TarFile, limits: Limits, collect_folder: str):
    # Members are read one by one (a gzip stream is decompressed as it is listed): stop at the caps.
    for count, info in enumerate(archive, 1):
        if count > limits.max_entries:
            raise UploadRefused(f"holds more than {limits.max_entries} entries")
        parts = _entry_parts(info.name)
        _check_entry(parts, info.name, collect_folder)
        if info.issym() or info.islnk():
            raise UploadRefused(f"entry {info.name!r} is a symbolic link or hard link")
        if not (info.isreg() or info.isdir()):
            raise UploadRefused(f"entry {info.name!r} is a special file")
        if info.isreg() and parts:
            yield Entry(parts, info.size), info


def _open(path: Path):
    if zipfile.is_zipfile(path):
        return zipfile.ZipFile(path)
    try:
        return tarfile.open(path, "r:*")
    except (OSError, EOFError, tarfile.TarError):
        raise UploadRefused("is not a readable zip or tar archive") from None


def _entries(archive, limits: Limits, collect_folder: str):
    """(Entry, zip or tar member) for each regular file, after all checks; refuses as it reads."""
    if isinstance(archive, zipfile.ZipFile):
        return _zip_entries(archive, limits, collect_folder)
    return _tar_entries(archive, limits, collect_folder)


# The decompressors' own errors too: a zip whose index is sound but whose deflate or LZMA data is
# not raises zlib.error or LZMAError, neither an OSError (bz2 raises OSError).
UNREADABLE = (OSError, EOFError, ValueError, RuntimeError, zipfile.BadZipFile, tarfile.TarError, zlib.error,
              lzma.LZMAError)


def _too_big(limits: Limits) -> UploadRefused:
    return UploadRefused(f"unpacks to more than {limits.max_bytes >> 20} MiB (a zip bomb?)")


def _listing(archive, limits: Limits, collect_folder: str):
    total, seen = 0, set()
    for entry, member in _entries(archive, limits, collect_folder):
        total += entry.size
        if total > limits.max_bytes:
            raise _too_big(limits)
        if entry.parts in seen:
            raise UploadRefused(f"entry {entry.name!r} appears twice")
        seen.add(entry.parts)
        if not entry.ignored and is_archive(entry.parts[-1], ARCHIVE_SUFFIXES):
            raise UploadRefused(f"holds a nested archive {entry.name!r}: hand in its files instead")
        yield entry, member


def list_archive(path: Path, limits: Limits, collect_folder: str) -> list[Entry]:
    """Every regular file of the archive, or UploadRefused naming the first problem."""
    if path.stat().st_size > limits.max_bytes:      # before its index is read into memory
        raise UploadRefused(f"is larger than {limits.max_bytes >> 20} MiB")
    try:
        with _open(path) as archive:
            return [entry for entry, _ in _listing(archive, limits, collect_folder)]
    except UNREADABLE as exc:
        raise UploadRefused(f"is not a readable zip or tar archive ({exc})") from None


def unpack(path: Path, dest: Path, limits: Limits, collect_folder: str) -> None:
    """Writes the archive's regular files (not the ignored ones) under dest, as plain files,
    within the caps; UploadRefused (dest removed) if the archive is not what its listing said."""
    written = 0
    dest.mkdir(parents=True)      # a fresh folder: only what is written here is removed on refusal
    try:
        with _open(path) as archive:
            for entry, member in _listing(archive, limits, collect_folder):
                if entry.ignored:
                    continue
                target = dest.joinpath(*entry.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                source = archive.open(member) if isinstance(archive, zipfile.ZipFile) else archive.extractfile(member)
                with source, open(target, "xb") as out:
                    while chunk := source.read(CHUNK):
                        written += len(chunk)
                        if written > limits.max_bytes:
                            raise _too_big(limits)
                        out.write(chunk)
    except UploadRefused:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except UNREADABLE as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise UploadRefused(f"could not be unpacked ({exc})") from None


def copy_loose(path: Path, dest: Path, limits: Limits) -> None:
    """An upload that is not an archive, copied as it is (within the size cap)."""
    if os.path.getsize(path) > limits.max_bytes:
        raise UploadRefused(f"is larger than {limits.max_bytes >> 20} MiB")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, dest)
