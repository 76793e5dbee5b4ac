"""One student's upload in an LMS download, checked before any of it is written.

An upload is a file the LMS put in the download (`amy_1001_2001_codesign.py`, `amy_lec01.zip`).
Which student it belongs to is read from that name alone (see collect.py); whatever the student
packed inside an archive is only ever their own files. An archive is listed first and refused as
a whole (UploadRefused, with the reason) if any entry could harm the instructor's machine or
make the collection ambiguous; only then is it unpacked, entry by entry, with the same caps.
What an archive's own headers claim is bounded before zipfile or tarfile acts on it: tarfile
reads a pax or GNU long-name header's whole claimed body into memory (a 6 MB .tar.gz claimed
6 GiB: MemoryError, nobody collected), and zipfile parses the whole central directory before any
entry cap (a 61 MB zip of 1.2 million names cost 570 MB and 17 s). So a tar header body past
MAX_HEADER_BYTES refuses the upload before it is read, a tar stream is never decompressed past
the upload's cap (plus room for headers), and a zip's index is counted from its end record and
its own records before ZipFile reads it.
No nbgrader import: the checks are plain zipfile/tarfile work.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import shutil
import struct
import tarfile
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.engine.terminal_text import invisible
# Folders an entry may sit in, the exchange's bound too: nbgrader lists extracted/ with os.walk and
# clears it with shutil.rmtree, both recursing once a folder (RecursionError past about 1,000, which
# stopped zip_collect for the whole class).
from autograder.nbgrader_bridge.inbound import MAX_DEPTH

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
    if len(parts) > MAX_DEPTH + 1:
        raise UploadRefused(f"entry {raw[:200]!r} is nested in more than {MAX_DEPTH} folders")
    return parts


def _check_entry(parts: tuple[str, ...], raw: str, collect_folder: str) -> None:
    hidden = any(p.startswith(".") or p in IGNORED_FOLDERS for p in parts)   # never unpacked (Entry.ignored)
    if not hidden and any(invisible(c) for c in raw):
        # nbgrader prints every unpacked file's name raw ("Parsing file", autograde's "Copying")
        raise UploadRefused(f"entry {raw!r} has a name holding a control character (or an invisible one: a bidi "
                            "override, a zero-width mark), which nbgrader would print raw on the instructor's terminal")
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


# A pax extended header or GNU long name/link is read whole into memory by tarfile; no honest
# name or set of pax records comes near this.
MAX_HEADER_BYTES = 1 << 16
_BODY_READ_HEADERS = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
                      tarfile.GNUTYPE_LONGLINK)
# Room for the headers of a tar stream (512-byte blocks, pax records) beyond the files' own bytes.
HEADER_ROOM = 8 << 20


class _BoundedTarInfo(tarfile.TarInfo):
    """tarfile's member header, refusing a header whose body (read whole into memory by tarfile)
    claims more than MAX_HEADER_BYTES before that body is read."""

    def _proc_member(self, tarfile_):
        if self.type in _BODY_READ_HEADERS and self.size > MAX_HEADER_BYTES:
            raise UploadRefused(f"holds a tar header (type {self.type.decode('ascii', 'replace')}) claiming "
                                f"{self.size} bytes, more than {MAX_HEADER_BYTES} (a header bomb?)")
        return super()._proc_member(tarfile_)


class _Capped:
    """A decompressed stream tarfile reads and seeks, that never decompresses past `cap` bytes."""

    def __init__(self, inner, cap: int, too_big):
        self.inner, self.cap, self.too_big = inner, cap, too_big

    def _check(self) -> None:
        if self.inner.tell() > self.cap:
            raise self.too_big()

    def read(self, size: int = -1) -> bytes:
        room = self.cap + 1 - self.inner.tell()
        data = self.inner.read(room if size is None or size < 0 else min(size, room))
        self._check()
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence == 0 and offset > self.cap:
            raise self.too_big()
        where = self.inner.seek(offset, whence)
        self._check()
        return where

    def tell(self) -> int:
        return self.inner.tell()

    def close(self) -> None:
        self.inner.close()


_COMPRESSED = ((b"\x1f\x8b", gzip.GzipFile), (b"BZh", bz2.BZ2File), (b"\xfd7zXZ\x00", lzma.LZMAFile))


@contextmanager
def _open(path: Path, limits: Limits):
    """The upload as an open ZipFile or TarFile (closed after), its headers bounded (see above)."""
    if zipfile.is_zipfile(path):
        _check_zip_index(path, limits)
        with zipfile.ZipFile(path) as archive:
            yield archive
        return
    with open(path, "rb") as handle:
        magic = handle.read(6)
    opener = next((make for start, make in _COMPRESSED if magic.startswith(start)), None)
    with (opener(path, "rb") if opener else open(path, "rb")) as stream:
        capped = _Capped(stream, limits.max_bytes + HEADER_ROOM, lambda: _too_big(limits))
        try:
            archive = tarfile.open(fileobj=capped, mode="r:", tarinfo=_BoundedTarInfo)
        except (OSError, EOFError, tarfile.TarError):
            raise UploadRefused("is not a readable zip or tar archive") from None
        with archive:
            yield archive


_END = struct.Struct("<4sHHHHIIH")          # end of central directory record
_END64_LOCATOR = struct.Struct("<4sIQI")
_END64 = struct.Struct("<4sQHHIIQQQQ")
_RECORD = struct.Struct("<4s24xHHH12x")     # a central directory record: its name, extra and comment lengths


def _check_zip_index(path: Path, limits: Limits) -> None:
    """Refuses a zip whose index lists more than `limits.max_entries` entries, from its end record
    and by counting its records (the end record can understate them), before ZipFile parses the
    whole index. A zip this cannot read is left to ZipFile, which says why."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        tail_at = max(0, size - (_END.size + 0xFFFF))
        handle.seek(tail_at)
        tail = handle.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < _END.size:
            return
        _, _, _, _, total, index_size, _, _ = _END.unpack_from(tail, at)
        end_at = tail_at + at
        if at >= _END64_LOCATOR.size and tail[at - _END64_LOCATOR.size:at - _END64_LOCATOR.size + 4] == b"PK\x06\x07":
            _, _, end64_at, _ = _END64_LOCATOR.unpack_from(tail, at - _END64_LOCATOR.size)
            handle.seek(end64_at)
            record = handle.read(_END64.size)
            if len(record) == _END64.size and record[:4] == b"PK\x06\x06":
                _, _, _, _, _, _, _, total, index_size, _ = _END64.unpack(record)
                end_at = end64_at
        if total > limits.max_entries:
            raise UploadRefused(f"its index lists {total} entries, more than {limits.max_entries}")
        start = end_at - index_size
        if start < 0:
            return
        handle.seek(start)
        count, read = 0, 0
        while read < index_size:
            head = handle.read(46)
            if len(head) < 46 or head[:4] != b"PK\x01\x02":
                return                                  # ZipFile says what is wrong
            count += 1
            if count > limits.max_entries:
                raise UploadRefused(f"its index holds more than {limits.max_entries} entries")
            name, extra, comment = _RECORD.unpack(head)[1:]
            handle.seek(name + extra + comment, os.SEEK_CUR)
            read += 46 + name + extra + comment


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
        with _open(path, limits) as archive:
            return [entry for entry, _ in _listing(archive, limits, collect_folder)]
    except UNREADABLE as exc:
        raise UploadRefused(f"is not a readable zip or tar archive ({exc})") from None


def unpack(path: Path, dest: Path, limits: Limits, collect_folder: str) -> None:
    """Writes the archive's regular files (not the ignored ones) under dest, as plain files,
    within the caps; UploadRefused (dest removed) if the archive is not what its listing said."""
    written = 0
    dest.mkdir(parents=True)      # a fresh folder: only what is written here is removed on refusal
    try:
        with _open(path, limits) as archive:
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
