"""Does `nbgrader export` write the scores as the gradebook means them (68.49, not
68.49000000000001), with the course's configuration choosing the kit's exporter, and names with
commas (nbgrader does not quote them) left alone?"""

import csv
import os
import sys

from nbgrader.api import Gradebook
from nbgrader.plugins.export import CsvExportPlugin
from traitlets.config.loader import PyFileConfigLoader

from autograder.nbgrader_bridge.export import RoundedCsvExportPlugin
from process_state import process_state_restored
from test_nbgrader_config import ROOT

SCORES = [60.0, 0.99, 7.5]   # sum() gives 68.49000000000001, as the database's sum does


def _gradebook(tmp_path, monkeypatch) -> str:
    # nbgrader creates the database with its `alembic` command, found on PATH (as nbgrader_config.py sets it)
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("lec01_codesign")
        gb.add_notebook("handout", "lec01_codesign")
        for i, points in enumerate(SCORES):
            gb.add_grade_cell(f"q{i}", "handout", "lec01_codesign", max_score=points, cell_type="code")
        gb.add_student("alice", last_name="Smith, Jr.", first_name="Alice")
        gb.add_submission("lec01_codesign", "alice")
        for i, points in enumerate(SCORES):
            grade = gb.find_grade(f"q{i}", "handout", "lec01_codesign", "alice")
            grade.manual_score = points
        gb.db.commit()
    return url


def _export(plugin_class, url, dest):
    with Gradebook(url) as gb:
        plugin_class(to=str(dest)).export(gb)
    return dest.read_text()


def test_the_scores_are_rounded_to_hundredths(tmp_path, monkeypatch):
    url = _gradebook(tmp_path, monkeypatch)
    assert sum(SCORES) != 68.49 and "68.49000000000001" in _export(CsvExportPlugin, url, tmp_path / "plain.csv")
    text = _export(RoundedCsvExportPlugin, url, tmp_path / "grades.csv")
    assert "68.49000000000001" not in text
    line = text.splitlines()[1]
    assert line.endswith(",68.49,0.0,68.49,68.49") and "Smith, Jr." in line
    assert list(csv.reader([text.splitlines()[0]]))[0][-4:] == ["raw_score", "late_submission_penalty", "score",
                                                                  "max_score"]


def test_the_course_configuration_uses_it():
    with process_state_restored():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    assert config.ExportApp.plugin_class == "autograder.nbgrader_bridge.export.RoundedCsvExportPlugin"
