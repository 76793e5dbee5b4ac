"""Entry point: `python -m autograder <verb> ...` (see autograder/cli.py)."""

import sys

from autograder.cli import main

sys.exit(main())
