"""zip_collect's file-name plugin for LMS downloads.

Canvas renames a resubmitted file `handout-1.ipynb`, `codesign-2.py`; nbgrader would collect it
under that name and then find no `handout.ipynb` to autograde. Strip the counter so the file
lands under the name the assignment expects.

It also keeps when the work was handed in, which nbgrader writes to
submitted/<student>/<assignment>/timestamp.txt for the late penalty:
- a time in the file name, captured by a `(?P<timestamp>...)` group of the configured
  `named_regexp` (e.g. Blackboard's `_attempt_2030-02-01-10-30-00_`), in ISO 8601 or
  `YYYY-MM-DD-HH-MM-SS`; a time without a zone is read in `timestamp_timezone`;
- Canvas's `<student>_LATE_...` marker, which says late but not by how much: recorded as one
  second after the due date of the gradebook (the policy's first day), with a warning so the
  instructor can correct timestamp.txt if the LMS shows the real time.
Loaded only by nbgrader (it imports nbgrader).
"""

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from nbgrader.plugins import FileNameCollectorPlugin
from traitlets import Unicode

RESUBMISSION_COUNTER = re.compile(r"-\d+(?=\.(?:ipynb|py)$)")
COMPACT_TIME = re.compile(r"^(\d{4})-(\d\d)-(\d\d)-(\d\d)-(\d\d)-(\d\d)$")
CANVAS_LATE = "_LATE_"


class LmsFileNameCollector(FileNameCollectorPlugin):
    timestamp_timezone = Unicode(
        "UTC", help="IANA time zone of LMS file-name times that carry no offset").tag(config=True)

    def collect(self, submitted_file):
        info = super().collect(submitted_file)
        if info is None:
            return None
        info["file_id"] = RESUBMISSION_COUNTER.sub("", info["file_id"])
        stamp = info.get("timestamp")
        if stamp:
            info["timestamp"] = self._iso(stamp)
        elif f"/{info['student_id']}{CANVAS_LATE}" in submitted_file:   # the file, or the zip it came in
            after_due = self._just_after_due()
            if after_due is not None:
                info["timestamp"] = after_due
        else:
            info.pop("timestamp", None)
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

    def _just_after_due(self):
        """One second after the gradebook's due date, as ISO 8601 UTC; None (with an error
        message) when no due date is recorded."""
        from nbgrader.api import Gradebook, MissingEntry

        app = self.parent
        assignment = app.coursedir.assignment_id
        try:
            with Gradebook(app.coursedir.db_url) as gb:
                due = gb.find_assignment(assignment).duedate
        except MissingEntry:
            due = None
        if due is None:
            self.log.error("Canvas marks a submission of %s _LATE but no due date is recorded: no late "
                           "penalty. Record it (nbgrader db assignment add %s --duedate=...) and run "
                           "zip_collect again.", assignment, assignment)
            return None
        when = due.replace(tzinfo=timezone.utc) + timedelta(seconds=1)   # nbgrader stores naive UTC
        self.log.warning("Canvas marks this submission _LATE without a time: recorded as %s, one second "
                         "after the due date (the late policy's first day). Edit timestamp.txt if the "
                         "LMS shows the real time.", when.isoformat())
        return when.isoformat()
