"""Loading nbgrader_config.py (as nbgrader does) sets os.environ and sys.path: tests undo it."""

import os
import sys
from contextlib import contextmanager


@contextmanager
def process_state_restored():
    environ, path = dict(os.environ), list(sys.path)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(environ)
        sys.path[:] = path
