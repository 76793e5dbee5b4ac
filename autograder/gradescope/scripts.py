"""The two shell scripts Gradescope runs: setup.sh (once, when the image is built) and
run_autograder (once per submission).

Gradescope unpacks the bundle into /autograder/source, runs setup.sh there as root, and later
copies run_autograder to /autograder/run_autograder and runs it with the student's files in
/autograder/submission/. Everything setup.sh installs comes from the distribution's package
registry (apt) and PyPI (pip, pinned in requirements.txt); nothing else is fetched.
"""

import shlex

from autograder.sandbox import confinement

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
# Ubuntu 22.04's python3.11 (universe) is 3.11.0rc1; the build log shows what was installed.
"$PYTHON" -c 'import sys; print("grading Python:", sys.version.split()[0])'
bwrap --version

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
exec "$PYTHON" -m autograder.gradescope {assignment} --root {root} --visibility {visibility} --isolation {isolation}
"""

README = """\
# Gradescope autograder for {assignment}

Upload this zip as the assignment's autograder (Gradescope: Configure Autograder > Zip file upload).
Gradescope runs `setup.sh` once when it builds the image and `run_autograder` for every submission.

## Base images

Supported base images (the grader picks bubblewrap's options by what the installed bwrap accepts):

| Base image | bubblewrap | Python setup.sh installs |
|---|---|---|
| Ubuntu 22.04 (Gradescope's default) | 0.6.1: no `--size` for a tmpfs, so the sandbox's /tmp is an unsized tmpfs (memory, not disk) and RLIMIT_FSIZE caps every file | python3.11 from universe, which is 3.11.0rc1 (a release candidate; the grader runs on it) |
| Debian 12 | 0.8.0 | python3.11 (3.11.2) |
| Ubuntu 24.04 (not tried yet) | 0.9.0 | python3 (3.12) |

Other images: Debian or Ubuntu with apt, Python 3.11 or newer, and bubblewrap 0.5 or newer.

Give the container at least 3 GB of memory: student code may use 2 GiB.

## Isolation: {isolation}

{isolation_text}
"""

def setup_sh(assignment: str) -> str:
    return SETUP_SH.format(assignment=assignment, venv=VENV_DIR)


def run_autograder(assignment: str, visibility: str, isolation: str = confinement.BEST.name) -> str:
    return RUN_AUTOGRADER.format(
        python_var=PYTHON_ENV_VAR,
        venv=VENV_DIR,
        root=GRADESCOPE_ROOT,
        assignment=shlex.quote(assignment),
        visibility=shlex.quote(visibility),
        isolation=shlex.quote(isolation),
    )


def readme(assignment: str, isolation: str) -> str:
    text = confinement.container_policy(isolation).note.format(assignment=assignment)
    return README.format(assignment=assignment, isolation=isolation, isolation_text=text)
