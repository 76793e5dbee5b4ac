"""One student's LMS upload listed under a memory bound: an archive whose headers claim more than
it holds is refused before anything reads what they claim. Each hostile archive is listed in a
child process whose address space is capped (RLIMIT_AS), as a smaller instructor machine would be;
before, tarfile read a pax header's claimed 2 GiB into memory (MemoryError out of zip_collect,
nobody collected) and zipfile parsed a 1.2-million-entry index (570 MB, 17 s) before the entry cap.
The whole zip_collect run with these uploads: tests/nbgrader_bridge/test_zip_collect_uploads.py."""

from __future__ import annotations

import gzip
import io
import struct
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

MIB = 1 << 20
CAP = 1 << 30          # the child's address space: past the interpreter's own, far below what is claimed


def pax_bomb(claimed: int, kind: bytes = tarfile.XHDTYPE) -> bytes:
    """A .tar.gz of a few MB whose first member is a pax extended header (or a GNU long name) claiming
    `claimed` bytes: gzip members of zeros, each made once (a student's shell does the same in seconds)."""
    info = tarfile.TarInfo("././@PaxHeader" if kind == tarfile.XHDTYPE else "././@LongLink")
    info.type, info.size = kind, claimed
    zeros = gzip.compress(bytes(16 * MIB), compresslevel=9)
    body = claimed + (-claimed) % 512
    out = io.BytesIO()
    out.write(gzip.compress(info.tobuf(format=tarfile.USTAR_FORMAT)))
    for _ in range(body // (16 * MIB)):
        out.write(zeros)
    out.write(gzip.compress(bytes(body % (16 * MIB)) + bytes(1024)))
    return out.getvalue()


def zip_index_bomb(entries: int, claimed: int | None = None) -> bytes:
    """A zip whose central directory lists `entries` empty names (zip64 end records); the end record
    claims `claimed` entries (default: the truth)."""
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, 0, 0, 0, 1, 0) + b"a"
    index = bytearray()
    for i in range(entries):
        name = format(i, "x").encode()
        index += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0,
                             0) + name
    count = entries if claimed is None else claimed
    end64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, len(index), len(local))
    locator = struct.pack("<IIQI", 0x07064B50, 0, len(local) + len(index), 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return local + bytes(index) + end64 + locator + end


LISTER = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
from pathlib import Path
from autograder.nbgrader_bridge.lms_upload import Limits, UploadRefused, list_archive
start = time.process_time()
try:
    list_archive(Path(sys.argv[1]), Limits(64 << 20, 2000), "extracted")
    print("LISTED")
except UploadRefused as exc:
    print("REFUSED", exc)
print("CPU", time.process_time() - start)
"""


def listed_in_a_bounded_child(path: Path) -> tuple[str, float]:
    done = subprocess.run([sys.executable, "-c", LISTER.format(cap=CAP), str(path)], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, f"listing the upload failed:\n{done.stderr[-3000:]}"
    outcome, cpu = done.stdout.rsplit("CPU", 1)
    return outcome.strip(), float(cpu)


@pytest.mark.parametrize("kind", [tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK])
def test_a_tar_header_claiming_gigabytes_is_refused_without_reading_it(tmp_path, kind):
    path = tmp_path / "mallory_1002_2002_work.tar.gz"
    path.write_bytes(pax_bomb(2 << 30, kind))
    assert path.stat().st_size < 8 * MIB
    outcome, cpu = listed_in_a_bounded_child(path)
    assert outcome.startswith("REFUSED") and "header" in outcome, outcome
    assert cpu < 5, f"{cpu:.1f} s of CPU to refuse it"


def test_a_tar_stream_decompressing_past_the_cap_is_refused_while_listed(tmp_path):
    """Every header within its bound, but 1,500 of them of 60 KB each (90 MB of headers for empty
    files): listing stops once the stream passes the upload's cap, it is not read to its end."""
    path = tmp_path / "mallory_1_1_work.tar.gz"
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for i in range(1500):
            info = tarfile.TarInfo(f"lec01_codesign/{i}.txt")
            info.pax_headers = {"comment": "x" * 60_000}
            tf.addfile(info, io.BytesIO(b""))
    outcome, _ = listed_in_a_bounded_child(path)
    assert outcome.startswith("REFUSED") and "MiB" in outcome, outcome


def test_a_zip_index_of_a_million_entries_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "mallory_1002_2002_lec01.zip"
    path.write_bytes(zip_index_bomb(1_200_000))
    start = time.monotonic()
    outcome, cpu = listed_in_a_bounded_child(path)
    assert outcome.startswith("REFUSED") and "2000" in outcome, outcome
    assert cpu < 1.0 and time.monotonic() - start < 10, cpu


def test_a_zip_whose_end_record_understates_its_index_is_refused_at_the_cap(tmp_path):
    """The end record says 10 entries; the index holds 1.2 million (zipfile parses the index whole)."""
    path = tmp_path / "mallory_1002_2002_lec01.zip"
    path.write_bytes(zip_index_bomb(1_200_000, claimed=10))
    outcome, cpu = listed_in_a_bounded_child(path)
    assert outcome.startswith("REFUSED"), outcome
    assert cpu < 1.0, cpu


def test_honest_archives_are_still_listed(tmp_path):
    import zipfile
    from autograder.nbgrader_bridge.lms_upload import Limits, list_archive
    zipped = tmp_path / "amy_1_1_lec01.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(30):
            zf.writestr(f"lec01_codesign/{'long_' * 40}{i}.py", "x = 1\n" * 100)
    tarred = tmp_path / "amy_1_1_lec01.tar.gz"
    with tarfile.open(tarred, "w:gz", format=tarfile.PAX_FORMAT) as tf:     # pax headers for long names
        for i in range(30):
            data = b"x = 1\n" * 100
            info = tarfile.TarInfo(f"lec01_codesign/{'é' * 200}{i}.py")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    for path in (zipped, tarred):
        assert len(list_archive(path, Limits(64 << 20, 2000), "extracted")) == 30, path


def test_an_upload_whose_reading_fails_unforeseen_is_flagged_and_the_class_collected(tmp_path, monkeypatch):
    """A failure no rule foresaw in one student's upload (here made to happen: a MemoryError while
    listing, an error while unpacking) flags that student; the others are planned and unpacked."""
    import csv
    import zipfile
    from types import SimpleNamespace

    pytest.importorskip("nbgrader")
    from traitlets.config import Configurable

    from autograder.nbgrader_bridge import collect
    from autograder.nbgrader_bridge.collect import GuardedLmsExtractor, LmsFileNameCollector

    archive, extracted = tmp_path / "downloaded" / "a" / "archive", tmp_path / "downloaded" / "a" / "extracted"
    archive.mkdir(parents=True)
    for student in ("amy", "bob", "mal"):
        with zipfile.ZipFile(archive / f"{student}_1_1_lec01.zip", "w") as zf:
            zf.writestr("lec01_codesign/codesign.py", f"OWNER = {student!r}\n")
    real_list, real_unpack = collect.list_archive, collect.unpack

    def listing(path, *args):
        if path.name.startswith("mal"):
            raise MemoryError("unforeseen while listing")
        return real_list(path, *args)

    def unpacking(path, dest, *args):
        if path.name.startswith("bob"):
            dest.mkdir(parents=True)
            (dest / "half.py").write_text("x")
            raise RuntimeError("unforeseen while unpacking")
        return real_unpack(path, dest, *args)
    monkeypatch.setattr(collect, "list_archive", listing)
    monkeypatch.setattr(collect, "unpack", unpacking)

    class App(Configurable):
        pass
    app = App()
    app.collector_plugin_inst = LmsFileNameCollector(named_regexp=r"(?P<student_id>[a-z]+)_\d+_\d+_(?P<file_id>.+)$",
                                                     valid_ext=[".py"])
    app.extracted_directory = "extracted"
    app.fail = lambda message: pytest.fail(message)
    app.coursedir = SimpleNamespace(assignment_id="a", submitted_directory=str(tmp_path / "submitted"),
                                    format_path=lambda *parts: str(Path(*parts)),
                                    root=str(tmp_path), groupshared=False)   # a course closed to others
    extractor = GuardedLmsExtractor(parent=app)
    extractor.extract(str(archive), str(extracted))
    assert {planned.upload.student_id for planned in extractor.plan.values()} == {"amy"}
    with open(extracted.parent / "flagged.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row["reason"] for row in csv.DictReader(handle)}
    assert "MemoryError" in rows["mal"] and "RuntimeError" in rows["bob"], rows
    assert not (extracted / "bob_1_1_lec01.zip").exists()
