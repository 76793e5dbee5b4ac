"""Entry point: `python -m autograder <verb> ...` (see autograder/cli.py)."""

import os
import sys

# One BLAS/OpenMP thread per process, set before anything imports numpy (the pools are sized at
# import): `grade -j N` already runs N trusted processes, and each starting a thread per core
# would oversubscribe the cores. An explicit setting in the environment still wins.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from autograder.cli import main  # noqa: E402 - must follow the thread settings

sys.exit(main())
