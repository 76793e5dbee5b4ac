"""zip_collect's file-name plugin for LMS downloads.

Canvas renames a resubmitted file `handout-1.ipynb`, `codesign-2.py`; nbgrader would collect it
under that name and then find no `handout.ipynb` to autograde. Strip the counter so the file
lands under the name the assignment expects. Loaded only by nbgrader (it imports nbgrader).
"""

import re

from nbgrader.plugins import FileNameCollectorPlugin

RESUBMISSION_COUNTER = re.compile(r"-\d+(?=\.(?:ipynb|py)$)")


class LmsFileNameCollector(FileNameCollectorPlugin):
    def collect(self, submitted_file):
        info = super().collect(submitted_file)
        if info is not None:
            info["file_id"] = RESUBMISSION_COUNTER.sub("", info["file_id"])
        return info
