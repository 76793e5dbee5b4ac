"""pytest puts every test folder on sys.path (rootdir-less "prepend" imports) and Python keeps one
module per name: two helper modules called alike in different test folders are one module in a
full run, whichever loaded first, while each folder alone passes."""

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_helper_modules_have_names_of_their_own():
    test_folders = {path.parent for path in TESTS.rglob("test_*.py")} | {TESTS}
    where = defaultdict(list)
    for folder in test_folders:
        for helper in folder.glob("*.py"):
            if helper.name != "conftest.py" and helper.name != "__init__.py" and not helper.name.startswith("test_"):
                where[helper.stem].append(str(helper.relative_to(TESTS)))
    assert {name: places for name, places in where.items() if len(places) > 1} == {}
