"""Generate the student files of an assignment from solutions/ (`python -m autograder build <name>`).

assignments/<name>/ is exactly what students see and nbgrader's source folder; the build keeps its
generated files (skeleton, notebook, copies of shared modules, README) in step with the sources,
and `build_assignment(name, check=True)` reports drift without writing.
"""

from autograder.build.assignment import (BuildError, build_assignment, build_everything, generated_files,
                                        write_reference_submission)
from autograder.build.markers import MarkerError
from autograder.build.notebook import NotebookSourceError

__all__ = ["BuildError", "MarkerError", "NotebookSourceError", "build_assignment", "build_everything", "generated_files",
           "write_reference_submission"]
