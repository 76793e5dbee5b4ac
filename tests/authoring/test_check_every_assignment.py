"""`python -m autograder check <name> --frozen` passes for every assignment of the repository:
no drift, no leak, the reference earns every automatic point, the skeleton nothing for functions."""

import pytest

from course_copy import ROOT, run
from discovery import assignments


@pytest.mark.parametrize("name", assignments())
def test_check_passes(name):
    done = run(ROOT, "-m", "autograder", "check", name, "--frozen")
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert f"{name}: ready" in done.stdout
