"""The one base type of instructor-side errors.

Anything a course author or instructor must fix (a malformed grading.toml, a broken notebook
source, a missing hidden-test package, a sandbox that cannot isolate) derives from
InstructorError; every CLI verb catches this one type, prints it and exits 2. A student's
submission never raises it: what a student does wrong is a score and a feedback message.
"""


class InstructorError(Exception):
    """Something the instructor or the course author must fix; the message says what and where."""
