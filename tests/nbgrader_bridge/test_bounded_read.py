"""nbgrader autograde's first read of a submitted notebook: bounded by how much JSON it holds, not
only by its 20 MB (collect's bound), since nbformat builds an object for every JSON value of it in
the instructor's own process before any of the kit's bounds apply."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets.config.loader import PyFileConfigLoader

from memory_peak import traced_peak
from process_state import process_state_restored

pytest.importorskip("nbgrader")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "assignments" / "lec01_codesign" / "handout.ipynb"


@pytest.fixture(scope="module")
def exporter():
    """The exporter nbgrader's Autograde makes with the course's config."""
    from nbgrader.converters import Autograde
    with process_state_restored():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
        autograde = Autograde(config=config)
        from nbconvert.preprocessors import ClearOutputPreprocessor
        exporter = autograde.exporter_class(parent=autograde, config=autograde.config)   # as its start() makes it
        exporter.register_preprocessor(ClearOutputPreprocessor(), enabled=True)     # (autograde registers its pipeline)
        yield exporter


def empty_objects(path: Path, count: int) -> Path:
    path.write_text('{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {"x": ['
                    + ",".join(["{}"] * count) + "]}}")
    return path


def test_a_notebook_of_a_million_empty_objects_is_refused_before_it_is_read(exporter, tmp_path):
    """1.2 million `{}` (3.6 MB): nbgrader's read took 0.6 GB and seconds of CPU (18 MB of them 3 GB,
    16 s) before the kit's bound on cells applied. Now refused before nbformat reads it, naming the
    file and what to do; autograde lists that student as failed and goes on."""
    bomb = empty_objects(tmp_path / "handout.ipynb", 1_200_000)
    with traced_peak() as peak, pytest.raises(ValueError, match=r"handout.ipynb holds 1,200,00\d JSON objects.*"
                                                                 r"grade it by hand"):
        exporter.from_filename(str(bomb))
    assert peak.bytes < 64 * 1024**2, peak.bytes


def test_a_notebook_of_millions_of_strings_is_refused_before_it_is_read(exporter, tmp_path):
    bomb = tmp_path / "handout.ipynb"
    bomb.write_text('{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {"x": ['
                    + ",".join(['""'] * 1_200_000) + "]}}")
    with traced_peak() as peak, pytest.raises(ValueError, match=r"1,200,00\d values"):
        exporter.from_filename(str(bomb))
    assert peak.bytes < 64 * 1024**2, peak.bytes


def test_a_notebook_nested_deeper_than_any_notebook_is_refused(exporter, tmp_path):
    deep = tmp_path / "handout.ipynb"
    deep.write_text('{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {"x": ' + "[" * 5000 + "]" * 5000 + "}}")
    with pytest.raises(ValueError, match="levels deep"):
        exporter.from_filename(str(deep))


def test_the_lectures_notebook_and_one_below_the_bounds_are_read(exporter, tmp_path):
    exporter.from_filename(str(NOTEBOOK))
    exporter.from_filename(str(empty_objects(tmp_path / "handout.ipynb", 90_000)))
