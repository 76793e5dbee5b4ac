"""zip_collect's extractor and file-name plugins for LMS downloads.

Who handed in a file is read only from the LMS's own file name in downloaded/<assignment>/archive/
(`amy_1001_2001_codesign.py`, `amy_lec01.zip`): `named_regexp` is matched against that name alone,
never against a path inside a student's archive, so nothing a student packs can be collected as a
classmate's file or make a classmate late. A file in a folder of archive/ is listed, never collected:
an LMS that downloads in folders keeps each student's own file names inside her folder. Where the name carries Canvas's user id
(`<name>_<user id>_<submission id>_<file>`), one name that arrives with two user ids (a classmate who
renamed herself in her LMS profile) collects nothing of either: both are listed.

GuardedLmsExtractor plans the whole collection before nbgrader collects anything: it lists every
student's archives (lms_upload.py), refuses an upload that holds absolute or `..` paths, links,
nested archives, a folder named like the collector's own `extracted/`, more than the size or
entry caps, or two files collected under one name with no time to choose by; then unpacks the
rest. A refused upload is that student's problem only: none of their files is collected, the
reason is logged as an error and written to downloaded/<assignment>/flagged.csv, and the class
is collected (nbgrader 0.9.6 aborted the whole class on a duplicate). A hidden LMS file or folder
(`._x.zip`, a macOS resource fork) is no student's upload: it is not looked into, and listed there
too, so nothing in the download is skipped without a line.

LmsFileNameCollector then hands nbgrader the planned student and file name of each unpacked file.
Canvas renames a resubmitted file `handout-1.ipynb`: the counter is stripped so the file lands
under the name the assignment expects. It also keeps when the work was handed in, which nbgrader
writes to submitted/<student>/<assignment>/timestamp.txt for the late penalty:
- a time in the file name, captured by a `(?P<timestamp>...)` group of `named_regexp`
  (e.g. Blackboard's `_attempt_2030-02-01-10-30-00_`), in ISO 8601 or `YYYY-MM-DD-HH-MM-SS`;
  a time without a zone is read in `timestamp_timezone`;
- Canvas's `<student>_LATE_...` marker at the start of the LMS file name, which says late but not
  by how much: recorded as one second after the due date of the gradebook (the policy's first
  day), with a warning so the instructor can correct timestamp.txt if the LMS shows the real time.
Students with neither get no timestamp.txt and so no late penalty: one warning names them all and
says what to do.
Loaded only by nbgrader (it imports nbgrader).
"""

import os
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from nbgrader.plugins import ExtractorPlugin, FileNameCollectorPlugin
from traitlets import Int, Unicode

from autograder.engine.locate import MAX_STUDENT_FILE_BYTES
from autograder.engine.terminal_text import invisible
from autograder.nbgrader_bridge.course_privacy import open_course
from autograder.nbgrader_bridge.flagged import bounded_zip_rows, shown, write_zip_flags
from autograder.nbgrader_bridge.lms_upload import (Limits, UploadRefused, collected_name, copy_loose, is_archive,
                                                   list_archive, unpack)

def _described(exc: BaseException) -> str:
    words = str(exc).encode("ascii", "backslashreplace").decode()[:160]
    return f"{type(exc).__name__}: {words}" if words else type(exc).__name__


COMPACT_TIME = re.compile(r"^(\d{4})-(\d\d)-(\d\d)-(\d\d)-(\d\d)-(\d\d)$")
CANVAS_LATE = "_LATE_"
# Canvas: <name>[_LATE]_<user id>_<submission id>_<file>; the name is one a student may edit in her profile
CANVAS_USER = r"(?:_LATE)?_(\d+)_\d+_"
FLAGGED_CSV = "flagged.csv"


@dataclass(frozen=True)
class Upload:
    """One file of the LMS download and what its name says."""
    rel: str                # path relative to archive/ (normally just the LMS file name)
    path: Path
    student_id: str
    file_id: str            # the collected name the LMS file name gives (loose files)
    timestamp: str | None   # ISO 8601 from the name, if any
    late: bool              # Canvas's _LATE marker
    lms_user: str | None = None   # Canvas's user id after the name, if the name has one


@dataclass(frozen=True)
class Planned:
    upload: Upload
    file_id: str            # the name it is collected under
    source: str             # where it came from, for messages: the LMS file and the entry inside


class LmsFileNameCollector(FileNameCollectorPlugin):
    timestamp_timezone = Unicode(
        "UTC", help="IANA time zone of LMS file-name times that carry no offset").tag(config=True)

    def check_regexp(self) -> str | None:
        """What is wrong with `named_regexp` for matching LMS file names, or None."""
        try:
            groups = re.compile(self.named_regexp).groupindex
        except re.error as exc:
            return f"FileNameCollectorPlugin.named_regexp is not a regular expression: {exc}"
        missing = {"student_id", "file_id"} - set(groups)
        if missing:
            return f"FileNameCollectorPlugin.named_regexp has no (?P<{min(missing)}>...) group"
        if "extracted/" in self.named_regexp:
            return ("FileNameCollectorPlugin.named_regexp is matched against the LMS's file name alone "
                    "(e.g. amy_1001_2001_codesign.py), never a path: remove its leading '.*/extracted/'")
        return None

    def describe(self, lms_name: str) -> dict | None:
        """student_id, file_id and timestamp (ISO, if the name has one) or late (Canvas) from an
        LMS file name; None if the name is not one of the pattern."""
        match = re.match(self.named_regexp, lms_name)
        if not match:
            return None
        groups = match.groupdict()
        info = {"student_id": groups["student_id"], "file_id": collected_name(groups["file_id"] or "")}
        if groups.get("timestamp"):
            info["timestamp"] = self._iso(groups["timestamp"])
        elif lms_name.startswith(f"{info['student_id']}{CANVAS_LATE}"):
            info["late"] = True
        user = re.match(re.escape(info["student_id"]) + CANVAS_USER, lms_name)
        if user:
            info["lms_user"] = user[1]
        other = self._shortest_prefix_reading(lms_name, match)
        if other is not None:
            info["ambiguous"] = other
        return info

    def _shortest_prefix_reading(self, lms_name: str, match: re.Match) -> str | None:
        """Why the name is ambiguous, or None. The LMS writes its prefix before the file name the student
        chose, so the prefix is the shortest one the pattern accepts before that file's name; a pattern
        (a leading greedy `.*`) that read the student or the time from further on read the student's text."""
        start = match.start("file_id")
        # the file's name with what follows it, which the pattern may read too (`\.py$`)
        tail = lms_name[start:] if start >= 0 else ""
        for end in range(start + 1):
            first = re.match(self.named_regexp, lms_name[:end] + tail)
            if first is None or first.start("file_id") != end:   # not a reading with the file's name after `end`
                continue
            ours = (match.group("student_id"), match.groupdict().get("timestamp"))
            theirs = (first.group("student_id"), first.groupdict().get("timestamp"))
            if ours == theirs:
                return None
            return (f"the pattern reads student {ours[0]!r} (time {ours[1]}) from the part of the name the student "
                    f"chose; the LMS's own prefix says {theirs[0]!r} (time {theirs[1]}): anchor "
                    f"FileNameCollectorPlugin.named_regexp at the name's start (no leading '.*')")
        return None

    def collect(self, submitted_file):
        extractor = getattr(self.parent, "extractor_plugin_inst", None)
        if not isinstance(extractor, GuardedLmsExtractor):
            raise ValueError("LmsFileNameCollector collects what GuardedLmsExtractor planned: set c.ZipCollectApp."
                             "extractor_plugin to autograder.nbgrader_bridge.collect.GuardedLmsExtractor")
        if extractor.plan is None:      # no archive/ folder: what is left in extracted/ is nobody's
            self.log.error("Not collected (no LMS download was unpacked in this run): %s", submitted_file)
            return None
        planned = extractor.plan.get(os.path.normpath(submitted_file))
        if planned is None:
            return None         # not a file to collect (its kind, or not a student's upload)
        info = {"student_id": planned.upload.student_id, "file_id": planned.file_id}
        if planned.upload.timestamp:
            info["timestamp"] = planned.upload.timestamp
        elif planned.upload.late:
            after_due = self._just_after_due(planned.upload.student_id)
            if after_due is not None:
                info["timestamp"] = after_due
        return info

    def _iso(self, stamp: str) -> str:
        """A file-name time as ISO 8601 with its offset (nbgrader parses that reliably)."""
        match = COMPACT_TIME.match(stamp)
        when = datetime(*map(int, match.groups())) if match else datetime.fromisoformat(stamp)
        if when.tzinfo is None:
            try:
                when = when.replace(tzinfo=ZoneInfo(self.timestamp_timezone))
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"timestamp_timezone {self.timestamp_timezone!r} is not an IANA time zone") from None
        return when.isoformat()

    def _just_after_due(self, student: str):
        """One second after the student's own due date (her extension included), as ISO 8601 UTC;
        None (with an error message) when no due date is recorded. Collected after the late policy's
        last day, the upload may have been handed in after the solutions went out: the time of this
        collection instead, at which nothing scores (said as an error)."""
        from nbgrader.api import Gradebook, MissingEntry

        from autograder.engine.lateness import load_policy
        from autograder.engine.registry import load_config

        app = self.parent
        assignment = app.coursedir.assignment_id
        try:
            with Gradebook(app.coursedir.db_url) as gb:
                due = gb.find_assignment(assignment).duedate
                try:
                    extension = gb.find_submission(assignment, student).extension
                except MissingEntry:
                    extension = None
        except MissingEntry:
            due = None
        if due is None:
            self.log.error("Canvas marks a submission of %s _LATE but no due date is recorded: no late "
                           "penalty. Record it (nbgrader db assignment add %s --duedate=...) and run "
                           "zip_collect again.", assignment, assignment)
            return None
        own = due.replace(tzinfo=timezone.utc) + (extension or timedelta(0))   # nbgrader stores naive UTC
        policy = load_policy(load_config(assignment))
        now = datetime.now(timezone.utc)
        if policy is not None and (now - own).total_seconds() > policy.open_seconds():
            self.log.error("%s: Canvas marks this submission _LATE without a time, and it is collected after the "
                           "late policy's last day (%s): it may have been handed in after the solutions went out. "
                           "Recorded as now, %s (nothing scores). If the LMS shows it was handed in earlier, write "
                           "that time into timestamp.txt.", shown(student),
                           (own + timedelta(seconds=policy.open_seconds())).isoformat(), now.isoformat())
            return now.isoformat()
        when = own + timedelta(seconds=1)
        self.log.warning("Canvas marks this submission _LATE without a time: recorded as %s, one second "
                         "after the due date%s (the late policy's first day). Edit timestamp.txt if the "
                         "LMS shows the real time.", when.isoformat(), " with her extension" if extension else "")
        return when.isoformat()


class GuardedLmsExtractor(ExtractorPlugin):
    max_unpacked_mib = Int(64, help="Most one student's upload may unpack to (MiB)").tag(config=True)
    max_entries = Int(2000, help="Most files and folders one archive of a student may hold").tag(config=True)

    plan = None     # extracted file (normalized absolute path) -> Planned, once extract() ran

    def extract(self, archive_path: str, extracted_path: str) -> None:
        app = self.parent
        collector = app.collector_plugin_inst
        if not isinstance(collector, LmsFileNameCollector):
            app.fail("GuardedLmsExtractor needs c.ZipCollectApp.collector_plugin = "
                     "autograder.nbgrader_bridge.collect.LmsFileNameCollector")
        problem = collector.check_regexp() or open_course(app.coursedir.root, staff_group=app.coursedir.groupshared)
        if problem:
            app.fail(problem)
        self.plan = {}
        self._limits = Limits(self.max_unpacked_mib << 20, self.max_entries)
        self._collector, self._extracted = collector, Path(extracted_path)
        flags: list[tuple[str, str, str]] = []        # (student, LMS file, reason)
        by_student: dict[str, list[Upload]] = defaultdict(list)
        hidden: list[str] = []
        for rel, path in self._lms_files(Path(archive_path), hidden):
            if "/" in rel:
                # an LMS that downloads in folders (Moodle) keeps the student's own file name inside hers:
                # a classmate's Canvas-style name there was read as the classmate's upload
                flags.append(("", rel, "in a folder of the download, where a file's name is the student's own, "
                                       "not the LMS's: no student's; put the LMS's files in archive/ itself"))
                continue
            if any(invisible(c) for c in path.name):   # nbgrader would print it raw ("Parsing file")
                flags.append((self._named_student(path.name), rel,
                              "its name holds a control character (or an invisible one: a bidi override, "
                              "a zero-width mark): not unpacked, read it"))
                continue
            try:
                info = collector.describe(path.name)
            except ValueError as exc:
                app.fail(f"{rel}: {exc}")
            if info is None:
                whole_class = " (unzip a download of the whole class into archive/ first)" \
                    if is_archive(path.name, self.zip_ext) else ""
                flags.append(("", rel, f"its name does not match FileNameCollectorPlugin.named_regexp "
                                       f"({collector.named_regexp}), so it is no student's{whole_class}"))
                continue
            if info.get("ambiguous"):
                flags.append(("", rel, f"not collected: {info['ambiguous']}"))
                continue
            by_student[info["student_id"]].append(Upload(rel, path, info["student_id"], info["file_id"],
                                                         info.get("timestamp"), info.get("late", False),
                                                         info.get("lms_user")))
        flags += [("", rel, "a hidden file or folder (its name starts with '.', e.g. a macOS resource fork "
                            "._…): no student's upload, not looked into") for rel in hidden]
        self._warn_without_time(by_student)
        for student, uploads in sorted(by_student.items()):
            users = sorted({u.lms_user for u in uploads if u.lms_user})
            if len(users) > 1:
                # a classmate who took her name in the LMS would hand in the files she did not
                flags += [(student, u.rel, f"{len(users)} LMS users hand in as {student} (Canvas user ids "
                                           f"{', '.join(users)}): none of their files is collected; read them and "
                                           f"rename each to its student") for u in uploads]
                continue
            try:
                self.plan.update(self._collect_student(uploads))
            except UploadRefused as exc:
                lms_file, reason = exc.args
                flags.append((student, lms_file, reason))
            except Exception as exc:      # noqa: BLE001 - one student's upload never stops the class's collect
                self.log.error("%s: reading the upload failed", shown(student), exc_info=exc)
                flags.append((student, uploads[0].rel, f"could not be read ({_described(exc)})"))
        self._report(flags, Path(extracted_path).parent / FLAGGED_CSV)

    def _named_student(self, lms_name: str) -> str:
        """The student an LMS file name that is not unpacked is listed under: the one the pattern reads
        from it when that id is plain text, else none. The LMS writes the id; the rest of the name is the
        student's own, and a flood of them is then that student's rows (capped), not the class's."""
        try:
            info = self._collector.describe(lms_name)
        except ValueError:
            return ""
        student = info["student_id"] if info else ""
        return "" if any(invisible(c) for c in student) else student

    @staticmethod
    def _lms_files(archive: Path, hidden: list[str]):
        """(path relative to archive/, path) of each file of the download, in order. Hidden files and
        folders (`._x.zip`: macOS resource forks) are no student's upload: appended to `hidden`."""
        for root, dirs, files in os.walk(archive):
            hidden += sorted((Path(root) / d).relative_to(archive).as_posix() + "/" for d in dirs if d.startswith("."))
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                path = Path(root) / name
                if name.startswith("."):
                    hidden.append(path.relative_to(archive).as_posix())
                else:
                    yield path.relative_to(archive).as_posix(), path

    def _warn_without_time(self, by_student: dict[str, list[Upload]]) -> None:
        """Students none of whose LMS file names carries a time or Canvas's _LATE marker: nothing
        judges their lateness (no timestamp.txt: no late penalty in nbgrader or the trusted grader)."""
        unknown = sorted(s for s, uploads in by_student.items() if not any(u.timestamp or u.late for u in uploads))
        if unknown:
            assignment = self.parent.coursedir.assignment_id
            self.log.warning(
                "No submission time known for %s: their LMS file names carry no time (and no _LATE marker), so "
                "no late penalty is charged. A Canvas download without _LATE is on time; otherwise capture the "
                "time with a (?P<timestamp>...) group in FileNameCollectorPlugin.named_regexp, or write it "
                "into submitted/<student>/%s/timestamp.txt (e.g. 2030-02-01 10:30:00 UTC) before autograde.",
                ", ".join(unknown), assignment)

    def _collect_student(self, uploads: list[Upload]) -> dict[str, Planned]:
        """One student's planned files, unpacked; UploadRefused((LMS file, reason)) refuses them all."""
        listed = []         # (upload, entries or None for a loose file)
        for upload in uploads:
            try:
                entries = (list_archive(upload.path, self._limits, self.parent.extracted_directory)
                           if is_archive(upload.path.name, self.zip_ext) else None)
            except UploadRefused as exc:
                raise UploadRefused(upload.rel, str(exc)) from None
            listed.append((upload, entries))
        planned = {}
        for upload, entries in listed:
            dest = self._extracted / upload.rel
            if entries is None:
                if self._collectable(upload.file_id):
                    planned[str(dest)] = Planned(upload, upload.file_id, upload.rel)
                continue
            for entry in entries:
                name = entry.parts[-1]
                if not entry.ignored and not name.startswith("_") and self._collectable(name):
                    planned[os.path.normpath(dest.joinpath(*entry.parts))] = Planned(
                        upload, collected_name(name), f"{upload.rel}:{entry.name}")
        self._refuse_duplicates(planned.values())
        self._refuse_unread_notebooks(listed)
        written = []
        try:
            for upload, entries in listed:
                dest = self._extracted / upload.rel
                written.append(dest)
                if entries is None:
                    copy_loose(upload.path, dest, self._limits)
                else:
                    unpack(upload.path, dest, self._limits, self.parent.extracted_directory)
        except Exception as exc:          # refused, or failed unforeseen: nothing of this student's is left
            for dest in written:
                if dest.is_file():
                    dest.unlink()
                elif dest.is_dir():
                    shutil.rmtree(dest, ignore_errors=True)
            if not isinstance(exc, UploadRefused):
                raise
            raise UploadRefused(written[-1].relative_to(self._extracted).as_posix(), str(exc)) from None
        return {os.path.normpath(k): v for k, v in planned.items()}

    def _refuse_unread_notebooks(self, listed) -> None:
        """A notebook larger than the grader reads scores nothing, and nbgrader's autograde read all of
        it, cell by cell, in the one process that autogrades the class (100,000 cells: 34 s, 670 MB)."""
        for upload, entries in listed:
            sizes = ([(upload.file_id, upload.path.stat().st_size)] if entries is None else
                     [(entry.parts[-1], entry.size) for entry in entries if not entry.ignored])
            for name, size in sizes:
                if name.endswith(".ipynb") and self._collectable(name) and size > MAX_STUDENT_FILE_BYTES:
                    raise UploadRefused(upload.rel, f"holds {name}, a notebook larger than the grader reads "
                                                    f"({MAX_STUDENT_FILE_BYTES // 1024**2} MB)")

    def _collectable(self, file_name: str) -> bool:
        return os.path.splitext(file_name)[1] in self._collector.valid_ext

    @staticmethod
    def _refuse_duplicates(planned) -> None:
        """Two files collected under one name: nbgrader keeps the newer only when both LMS names
        carry distinct times; otherwise which one to grade is unclear."""
        by_name = defaultdict(list)
        for item in planned:
            by_name[item.file_id].append(item)
        for file_id, items in sorted(by_name.items()):
            times = [item.upload.timestamp for item in items]
            if len(items) > 1 and (None in times or len(set(times)) < len(times)):
                raise UploadRefused(items[0].upload.rel, f"hands in {file_id} twice "
                                    f"({', '.join(item.source for item in items)}) with no time to choose by")

    def _report(self, flags, csv_path: Path) -> None:
        # one student's uploads give at most ZIP_ROWS_PER_STUDENT rows and one that counts the rest:
        # 300 files with a zero-width space in their names were 300 rows and error lines
        flags = bounded_zip_rows(flags, archive=f"downloaded/{self.parent.coursedir.assignment_id}/archive/")
        write_zip_flags(csv_path, flags)
        submitted = self.parent.coursedir.submitted_directory
        collected = {planned.upload.student_id for planned in self.plan.values()}
        for student, lms_file, reason in flags:
            self.log.error("%s", shown(f"{student or '(no student)'}: {lms_file}: {reason}; not collected"))
        # once per student none of whose files is collected (a student whose one oddly named file is
        # listed has the rest collected)
        for student in dict.fromkeys(student for student, _, _ in flags if student and student not in collected):
            earlier = self.parent.coursedir.format_path(submitted, student, self.parent.coursedir.assignment_id)
            if os.path.isdir(earlier):
                self.log.error("%s: %s holds an earlier collection, which is graded unless you remove it",
                               student, earlier)
        if flags:
            self.log.error("%d upload(s) not collected, listed in %s; everyone else is collected",
                           len(flags), csv_path)
