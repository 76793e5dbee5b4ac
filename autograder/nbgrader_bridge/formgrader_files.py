"""formgrader's files of a submission served sandboxed, as Jupyter's own /files/ are.

nbgrader 0.9.6's formgrader serves every file of autograded/<student>/<assignment>/ at
<base>/formgrader/submissions/<id>/<path> (SubmissionFilesHandler, for the images a notebook links
to) from the instructor's own origin, with no sandbox: a `page.html` or `plot.svg` the student
handed in ran its script as the TA's logged-in Jupyter session (its API, its terminals, every
course's gradebook). Jupyter's /files/ sends `Content-Security-Policy: ...; sandbox allow-scripts`
for the same reason; formgrader's files get `sandbox` with nothing allowed: a page shows, no
script of it runs, and it has no origin of its own (no cookie, no same-origin request).

Applied by nbgrader_config.py when formgrader's server reads it (formgrader loads the course's
config before it serves anything); nothing to do in any other process.
"""

from __future__ import annotations

import sys

HANDLERS = "nbgrader.server_extensions.formgrader.handlers"
SANDBOX = "sandbox"


def _sandboxed_policy(self) -> str:
    return f"{super(self._cs349e_base, self).content_security_policy}; {SANDBOX}"


def sandbox_submission_files() -> bool:
    """Give formgrader's SubmissionFilesHandler a sandboxing policy, if formgrader is loaded in this
    process (True then). Idempotent."""
    handlers = sys.modules.get(HANDLERS)
    if handlers is None:
        return False
    cls = handlers.SubmissionFilesHandler
    if getattr(cls, "_cs349e_base", None) is not cls:
        cls._cs349e_base = cls
        cls.content_security_policy = property(_sandboxed_policy)
    return True
