"""Entry point of run_autograder inside a Gradescope container (see runtime.py)."""

import sys

from autograder.gradescope.runtime import main

sys.exit(main())
