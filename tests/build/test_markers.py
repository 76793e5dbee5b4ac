"""Solution regions: found exactly, and every malformed region stops the build (like nbgrader)."""

import pytest

from autograder.build.markers import MarkerError, find_regions, strip_marker_lines

GOOD = '''def f(x):
    """Doc."""
    ### BEGIN SOLUTION
    y = x + 1
    return y
    ### END SOLUTION
'''


def test_a_region_holds_the_lines_between_its_markers():
    (region,) = find_regions(GOOD, "f.py")
    assert (region.begin, region.end, region.indent) == (3, 6, "    ")
    assert region.body == ("    y = x + 1", "    return y")


def test_strip_marker_lines_keeps_the_solution_and_drops_only_the_markers():
    assert strip_marker_lines(GOOD, "f.py") == 'def f(x):\n    """Doc."""\n    y = x + 1\n    return y\n'


@pytest.mark.parametrize("source, message", [
    ("def f():\n    ### BEGIN SOLUTION\n    return 1\n", "no end solution statement found"),
    ("def f():\n    return 1\n    ### END SOLUTION\n", "without a begin"),
    ("def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n", "nested"),
    ("def f():\n    ## BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n", "malformed marker"),
    ("def f():\n    ### begin solution\n    return 1\n    ### END SOLUTION\n", "malformed marker"),
    ("def f():\n    ### BEGIN SOLUTION\n    return 1\n  ### END SOLUTION\n", "indented differently"),
    ("def f():\n    ### BEGIN SOLUTION\n\n    ### END SOLUTION\n", "empty solution region"),
    ("### BEGIN HIDDEN TESTS\nassert True\n### END HIDDEN TESTS\n", "hidden-test marker"),
])
def test_malformed_regions_raise_with_file_line_and_reason(source, message):
    with pytest.raises(MarkerError, match=message) as info:
        find_regions(source, "bad.py")
    assert str(info.value).startswith("bad.py:")
