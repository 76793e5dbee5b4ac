"""A student's broken cell metadata costs that cell, never nbgrader's whole autograde batch."""

import copy

import nbformat
import pytest
from nbgrader.preprocessors import CheckCellMetadata, DeduplicateIds
from nbgrader.nbgraderformat import SchemaTooOldError

from autograder.nbgrader_bridge.sanitize_metadata import DropInvalidCellMetadata


def grade_cell(grade_id, points=2.0):
    meta = {"grade": True, "grade_id": grade_id, "locked": True, "points": points, "schema_version": 3,
            "solution": False, "task": False}
    return nbformat.v4.new_code_cell(f'check("{grade_id}")', metadata={"nbgrader": meta})


def twin(cell):
    copied = copy.deepcopy(cell)
    copied.id = f"{cell.id}-copy"
    return copied


def notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def sanitize(nb):
    return DropInvalidCellMetadata().preprocess(nb, {})[0]


def test_nbgraders_own_pipeline_aborts_on_a_duplicated_grade_cell():
    """The failure this preprocessor exists for (nbgrader 0.9.6 ends the batch on SchemaTooOldError)."""
    first = grade_cell("q01")
    nb = notebook(first, twin(first))
    nb, _ = DeduplicateIds().preprocess(nb, {})
    with pytest.raises(SchemaTooOldError):
        CheckCellMetadata().preprocess(nb, {})


def test_the_first_of_duplicated_cells_keeps_its_metadata_and_the_pipeline_passes():
    first = grade_cell("q01")
    nb = sanitize(notebook(first, twin(first), grade_cell("q02")))
    assert [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells] == ["q01", None, "q02"]
    nb, _ = DeduplicateIds().preprocess(nb, {})
    CheckCellMetadata().preprocess(nb, {})


@pytest.mark.parametrize("corrupt", [
    lambda meta: meta.update(schema_version=99),
    lambda meta: meta.update(schema_version=1),
    lambda meta: meta.pop("points"),
    lambda meta: meta.update(grade_id=""),
    lambda meta: meta.update(points="lots"),
])
def test_invalid_metadata_is_removed(corrupt):
    cell = grade_cell("q01")
    corrupt(cell.metadata["nbgrader"])
    nb = sanitize(notebook(cell, grade_cell("q02")))
    assert "nbgrader" not in nb.cells[0].metadata and nb.cells[1].metadata["nbgrader"]["grade_id"] == "q02"
    CheckCellMetadata().preprocess(nb, {})


def test_metadata_that_is_not_a_mapping_is_removed():
    cell = grade_cell("q01")
    cell.metadata["nbgrader"] = "points: 100"
    assert "nbgrader" not in sanitize(notebook(cell)).cells[0].metadata


def test_valid_notebooks_are_left_alone():
    nb = notebook(grade_cell("q01"), nbformat.v4.new_markdown_cell("text"), grade_cell("q02"))
    before = copy.deepcopy(nb)
    assert sanitize(nb) == before


# -- nbgrader's metadata validation, its schema checked once (schema_once.py) -----------------
@pytest.mark.parametrize("meta", [
    {"grade": True, "grade_id": "q1", "locked": True, "points": 2.0, "schema_version": 3, "solution": False},
    {"grade": True, "grade_id": "q1", "locked": True, "points": "two", "schema_version": 3, "solution": False},
    {"grade": True, "grade_id": "q 1!", "locked": True, "points": 2.0, "schema_version": 3, "solution": False},
    {"grade": True, "locked": True, "points": 2.0, "schema_version": 3, "solution": False},
    {"grade": "yes", "grade_id": "q1", "locked": [], "schema_version": 3, "solution": False, "extra": 1},
])
def test_metadata_is_judged_exactly_as_nbgrader_judges_it_with_the_schema_checked_once(meta, monkeypatch):
    import jsonschema
    from nbgrader.nbgraderformat import MetadataValidator, common

    from autograder.nbgrader_bridge.schema_once import SchemaCheckedOnce

    def outcome(validator):
        try:
            validator.validate_cell(nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": copy.deepcopy(meta)}))
        except Exception as err:  # noqa: BLE001 - the exception itself is compared
            return type(err), str(err)
        return None

    monkeypatch.setattr(common, "jsonschema", jsonschema)
    expected = outcome(MetadataValidator())
    once = SchemaCheckedOnce()
    monkeypatch.setattr(common, "jsonschema", once)
    checked = []
    kind = jsonschema.validators.validator_for(MetadataValidator().schema)
    monkeypatch.setattr(kind, "check_schema", classmethod(lambda cls, schema: checked.append(1)))
    assert [outcome(MetadataValidator()) for _ in range(5)] == [expected] * 5
    assert len(checked) == 1


def test_metadata_found_valid_is_validated_once_and_a_changed_value_or_type_is_judged_again(monkeypatch):
    import jsonschema
    from nbgrader.nbgraderformat import MetadataValidator, common

    from autograder.nbgrader_bridge.schema_once import SchemaCheckedOnce

    monkeypatch.setattr(common, "jsonschema", SchemaCheckedOnce())
    kind = jsonschema.validators.validator_for(MetadataValidator().schema)
    validated = []
    iter_errors = kind.iter_errors

    def counted(self, instance):
        if isinstance(instance, dict) and "schema_version" in instance:   # nbgrader metadata, not a cell nbformat checks
            validated.append(1)
        return iter_errors(self, instance)

    monkeypatch.setattr(kind, "iter_errors", counted)

    def judged(meta):
        cell = nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": meta})
        try:
            MetadataValidator().validate_cell(cell)   # a new validator (and schema object) per notebook, as nbgrader
        except jsonschema.ValidationError as err:
            return err.message
        return None

    valid = grade_cell("q01").metadata["nbgrader"]
    assert [judged(copy.deepcopy(valid)) for _ in range(4)] == [None] * 4
    assert len(validated) == 1
    assert judged({**valid, "points": True}) is not None   # True is no number: not the valid 1-point cell
    assert judged({**valid, "points": 2}) is None and judged({**valid, "points": "2"}) is not None
    assert judged({**valid, "points": "2"}) is not None   # an invalid one is judged (and reported) every time
    assert len(validated) == 5


ESCAPES = "\x1b]52;c;aGk=\x07\x1b[2J"   # OSC 52 writes the instructor's clipboard, then the screen is cleared


@pytest.mark.parametrize("meta", [
    {"grade": True, "solution": True, "locked": False, "points": 1.0, "schema_version": 3, "task": False},
    {"grade": False, "solution": False, "locked": False, "points": 1.0, "schema_version": 3, "task": True,
     "grade_id": "zz"},
])
def test_the_line_saying_why_metadata_was_removed_shows_the_cells_source_without_terminal_escapes(meta):
    """nbgrader's validator quotes the cell's source in its message ("nbgrader cell does not have a
    grade_id: <source>", "Task cells have to be markdown: <source>"), and autograde logged that
    message raw: a student's cell with such metadata and an escape sequence in its source wrote the
    instructor's clipboard and cleared the terminal."""
    import logging

    records: list[logging.LogRecord] = []
    capture = logging.Handler()
    capture.emit = records.append
    step = DropInvalidCellMetadata()
    step.log.addHandler(capture)
    try:
        nb = step.preprocess(notebook(nbformat.v4.new_code_cell(ESCAPES + "x = 1", metadata={"nbgrader": meta})), {})[0]
    finally:
        step.log.removeHandler(capture)
    assert "nbgrader" not in nb.cells[0].metadata
    (message,) = [record.getMessage() for record in records]
    assert "x = 1" in message and "\x1b" not in message and "\x07" not in message, message
