"""The released side of per-student variants: the parameter table and the helper that reads it.

`assignments/<name>/variants.json` maps every student of the course roster (`roster.txt` at the
course root, one student id per line) to their parameters. nbgrader releases one folder to the
whole class, so the table holds every student's entry; each is named by HMAC(token, id), where the
token is the student's own (HMAC of the id with the instructor's secret seed, handed to each
student: `python -m autograder variant <name> --tokens`). An id alone, or the class list, finds
no entry; a student's own id and token find theirs. The table holds parameters only: never a key,
never the seed, never an id. `variant.py` is the released helper the notebook's first code cell
calls.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from autograder.engine.grader import STUDENT_ID_ENV, VARIANT_ENV
from autograder.engine.registry import REPO_ROOT
from autograder.engine.roster import ROSTER_FILE, RosterError, read_roster, roster_path  # noqa: F401 - its home before
from autograder.engine.variants import HELPER_FILE, TABLE_FILE, TOKEN_ENV, params_for, table_key, variant_token


def variants_table(name: str, root: Path = REPO_ROOT) -> str:
    """The text of assignments/<name>/variants.json for the roster."""
    roster = read_roster(roster_path(root))
    if not roster:
        print(f"warning: {roster_path(root)} lists no student: {name}'s {TABLE_FILE} is empty, so no student "
              f"can open their variant (write one student id per line and build again)", file=sys.stderr)
    table = {table_key(name, sid, variant_token(name, sid)): params_for(name, sid) for sid in roster}
    data = {"assignment": name, "by_key": dict(sorted(table.items()))}
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def variant_helper(name: str) -> str:
    # imported here: the templates' module imports the notebook builder (nbformat: ~2 s of CPU)
    from autograder.build.student_files import render_template

    return render_template(f"{HELPER_FILE}.tmpl", {"ASSIGNMENT": name, "TABLE_FILE": TABLE_FILE,
                                                   "STUDENT_ID_ENV": STUDENT_ID_ENV, "VARIANT_ENV": VARIANT_ENV,
                                                   "TOKEN_ENV": TOKEN_ENV})


def variant_files(name: str) -> dict[str, str]:
    """Relative path under assignments/<name>/ -> text: the table and its helper."""
    return {TABLE_FILE: variants_table(name), HELPER_FILE: variant_helper(name)}
