"""Where the nbgrader course lives, as the committed nbgrader_config.py says.

The config is read with traitlets alone: importing nbgrader takes seconds, and the bridge the
kernel's check() starts should not pay that.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.errors import InstructorError

CONFIG_FILE = "nbgrader_config.py"

# nbgrader 0.9.6's defaults (nbgrader.coursedir.CourseDirectory), used where the config is silent.
DEFAULT_STRUCTURE = "{nbgrader_step}/{student_id}/{assignment_id}"
DEFAULT_SUBMITTED = "submitted"


class CourseError(InstructorError):
    """The nbgrader course is missing or not set up (an instructor's problem)."""


@dataclass(frozen=True)
class Course:
    root: Path
    course_id: str
    db_url: str
    submitted_directory: str
    exchange_root: str = "/usr/local/share/nbgrader/exchange"   # nbgrader 0.9.6's Exchange.root default
    groupshared: bool = False     # CourseDirectory.groupshared: the course folder's group is its staff's

    @property
    def submitted_folder(self) -> Path:
        """nbgrader's submitted/: one <student>/<assignment>/ folder per collected submission."""
        return self.root / self.submitted_directory

    @property
    def gradebook_file(self) -> Path:
        prefix = "sqlite:///"
        if not self.db_url.startswith(prefix):
            raise CourseError(f"only a sqlite gradebook is supported, got {self.db_url!r}")
        return Path(self.db_url[len(prefix):])


def load_course(root: Path) -> Course:
    """Read root/nbgrader_config.py (executing it, as nbgrader does)."""
    from traitlets.config.loader import ConfigFileNotFound, PyFileConfigLoader

    root = Path(root).resolve()
    try:
        config = PyFileConfigLoader(CONFIG_FILE, path=str(root)).load_config()
    except ConfigFileNotFound:
        raise CourseError(f"{root / CONFIG_FILE} not found: run from the course's repository root") from None
    settings = config.CourseDirectory
    course_root = Path(settings.get("root", str(root)))
    structure = settings.get("directory_structure", DEFAULT_STRUCTURE)
    if structure != DEFAULT_STRUCTURE:
        raise CourseError(f"unsupported CourseDirectory.directory_structure {structure!r}")
    return Course(root=course_root, course_id=settings.get("course_id", ""),
                  db_url=settings.get("db_url", f"sqlite:///{course_root / 'gradebook.db'}"),
                  submitted_directory=settings.get("submitted_directory", DEFAULT_SUBMITTED),
                  groupshared=bool(settings.get("groupshared", False)),
                  **({"exchange_root": config.Exchange.root} if "root" in config.Exchange else {}))
