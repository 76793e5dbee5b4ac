"""Fixtures for the sandbox tests: Sandboxes on tiny submissions, all closed after each test."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_helpers import BWRAP_MISSING, FAST, write_files

from autograder.sandbox import Limits, Sandbox


@pytest.fixture
def submission(tmp_path):
    """Writes a submission folder from {name: source} and returns its path."""
    def make(files: dict[str, str], name: str = "student") -> Path:
        return write_files(tmp_path / name, files)
    return make


@pytest.fixture
def sandbox(submission):
    """Opens a bubblewrap Sandbox on a submission; closes every one at the end of the test."""
    opened = []

    def make(files: dict[str, str], *, limits: Limits = FAST, isolation: str = "bubblewrap",
             overlay=None, env=None, factories=()) -> Sandbox:
        if isolation == "bubblewrap" and BWRAP_MISSING:
            pytest.skip("bubblewrap (bwrap) is not installed")
        box = Sandbox(submission(files, name=f"student{len(opened)}"), overlay=overlay or {},
                      limits=limits, isolation=isolation, env=env, factories=factories)
        opened.append(box)
        return box

    yield make
    for box in opened:
        box.close()
