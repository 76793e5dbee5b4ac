"""Why a cluster is refused: one line each, raised on the instructor's side (at connect time) or
by a task on a worker (a worker that joined later), and shown as `grade: <line>`, exit 2."""

from autograder.errors import InstructorError


class ClusterRefused(InstructorError):
    """The cluster cannot grade this batch as a local run would: another kit on a worker, a worker
    that cannot isolate student code, no scheduler, no workers, or no dask installed."""
