"""The two shell scripts Gradescope runs: setup.sh (once, when the image is built) and
run_autograder (once per submission).

Gradescope unpacks the bundle into /autograder/source, runs setup.sh there as root, and later
copies run_autograder to /autograder/run_autograder and runs it with the student's files in
/autograder/submission/. Everything setup.sh installs comes from the distribution's package
registry (apt) and PyPI (pip, pinned in requirements.txt); nothing else is fetched.
"""

import shlex

# Where setup.sh puts the grading virtualenv; run_autograder's default interpreter.
VENV_DIR = "/autograder/venv"
# run_autograder uses this interpreter instead when the variable is set (tests point it at the
# already-installed environment instead of running setup.sh).
PYTHON_ENV_VAR = "CS349E_PYTHON"
GRADESCOPE_ROOT = "/autograder"

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope image setup for the CS349E trusted grader ({assignment}).
# Installs from package registries only: apt (bubblewrap, Python) and PyPI (requirements.txt,
# every package pinned to the version the kit is tested with, wheels only).
# Python: 3.11 from the Ubuntu archive where it has one (Gradescope's Ubuntu 22.04 image: the
# version the kit is tested with), else the system python3 if it is 3.11 or newer (24.04: 3.12).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

apt-get update -qq
apt-get install -y -qq --no-install-recommends bubblewrap

if apt-cache show python3.11-venv >/dev/null 2>&1; then
    apt-get install -y -qq --no-install-recommends python3.11 python3.11-venv
    PYTHON=python3.11
else
    apt-get install -y -qq --no-install-recommends python3 python3-venv
    PYTHON=python3
fi
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11) and "the grader needs Python >= 3.11")'

"$PYTHON" -m venv {venv}
{venv}/bin/python -m pip install --quiet --no-cache-dir --only-binary=:all: -r /autograder/source/requirements.txt
# matplotlib's font cache, once per image: every sandbox reads it (autograder/sandbox/plotting.py).
(cd /autograder/source && {venv}/bin/python -c 'from autograder.sandbox.plotting import font_cache; font_cache()')
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission: grade /autograder/submission/ with the trusted
# grader (hidden tests, sandbox) and write /autograder/results/results.json.
# Interpreter: ${python_var} if set, else the virtualenv that setup.sh created.
set -uo pipefail
PYTHON="${{{python_var}:-{venv}/bin/python}}"
cd {root}/source || exit 1
exec "$PYTHON" -m autograder.gradescope {assignment} --root {root} --visibility {visibility}
"""


def setup_sh(assignment: str) -> str:
    return SETUP_SH.format(assignment=assignment, venv=VENV_DIR)


def run_autograder(assignment: str, visibility: str) -> str:
    return RUN_AUTOGRADER.format(
        python_var=PYTHON_ENV_VAR,
        venv=VENV_DIR,
        root=GRADESCOPE_ROOT,
        assignment=shlex.quote(assignment),
        visibility=shlex.quote(visibility),
    )
