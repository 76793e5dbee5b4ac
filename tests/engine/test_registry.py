"""Is grading.toml read from the repository and validated loudly?"""

import pytest

from autograder.engine.registry import ConfigError, load_config


def write(tmp_path, text, name="demo"):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "grading.toml").write_text(text, encoding="utf-8")
    return tmp_path


GOOD = '''
assignment = "demo"
student_files = ["work.py", "answers.ipynb"]
[[items]]
id = "f"
kind = "function"
points = 10
[[items]]
id = "q1"
kind = "number"
points = 2
rtol = 0.02
[[items]]
id = "q2"
kind = "choice"
points = 1
choices = ["A", "B"]
[[items]]
id = "q3"
kind = "text"
points = 5
'''


def test_a_valid_registry(tmp_path):
    config = load_config("demo", assignments_dir=write(tmp_path, GOOD))
    assert config.total_points == 18 and config.student_module == "work" and config.notebook == "answers.ipynb"
    assert [i.id for i in config.items_of("number", "choice")] == ["q1", "q2"]


def test_demand_is_optional_and_read_when_given(tmp_path):
    config = load_config("demo", assignments_dir=write(tmp_path, GOOD.replace(
        'kind = "number"', 'kind = "number"\ndemand = "reasoning"')))
    assert [(i.id, i.demand) for i in config.items] == [("f", None), ("q1", "reasoning"), ("q2", None), ("q3", None)]


def test_the_lec01_registry_loads():
    config = load_config("lec01_codesign")
    assert config.student_files == ("codesign.py", "handout.ipynb")
    assert "hw_specs.py" in config.trusted_files() and "codesign.py" not in config.trusted_files()


@pytest.mark.parametrize("broken, message", [
    (GOOD.replace('assignment = "demo"', 'assignment = "other"'), "expected 'demo'"),
    (GOOD.replace('kind = "text"', 'kind = "essay"'), "kind must be one of"),
    (GOOD.replace("rtol = 0.02", ""), "needs rtol or atol"),
    (GOOD.replace('choices = ["A", "B"]', ""), "non-empty list of choices"),
    (GOOD.replace('id = "q3"', 'id = "q1"'), "duplicate item ids"),
    (GOOD.replace("points = 10", "points = 0"), "positive number"),
    (GOOD.replace('kind = "number"', 'kind = "number"\ndemand = "guess"'), "demand of a number item must be one of"),
    (GOOD.replace('kind = "function"', 'kind = "function"\ndemand = "reasoning"'),
     r"demand of a function item must be one of \('implement',\)"),
    ("assignment = [", "not valid TOML"),
])
def test_malformed_registries_are_refused_with_a_reason(tmp_path, broken, message):
    with pytest.raises(ConfigError, match=message):
        load_config("demo", assignments_dir=write(tmp_path, broken))


def test_unknown_assignment(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config("nothing", assignments_dir=tmp_path)


@pytest.mark.parametrize("broken, message", [
    (GOOD.replace('assignment = "demo"', 'assignment = "demo"\ntotal_points = 40'),
     r"unknown key 'total_points'.*valid keys: assignment, items, late, shared_modules, student_files"),
    (GOOD.replace('student_files =', 'shared_module = ["console.py"]\nstudent_files ='),
     r"unknown key 'shared_module'.*did you mean 'shared_modules'"),
    (GOOD.replace("points = 10", "points = 10\nweight = 3"), r"item #1 \(f\): unknown key 'weight'"),
    (GOOD.replace("rtol = 0.02", "rtol = 0.02\nplausable = [0.0, 1.0]"),
     r"item #2 \(q1\): unknown key 'plausable'.*did you mean 'plausible'"),
])
def test_an_unknown_key_is_refused_with_the_nearest_valid_name(tmp_path, broken, message):
    with pytest.raises(ConfigError, match=message):
        load_config("demo", assignments_dir=write(tmp_path, broken))


def test_the_digest_covers_the_data_files_the_keys_are_measured_on(tmp_path, monkeypatch):
    """A changed real_tensors.npz changes the keys, so results graded under the old one are stale."""
    import autograder.engine.registry as registry

    folder = tmp_path / "assignments" / "demo"
    folder.mkdir(parents=True)
    monkeypatch.setattr(registry, "REPO_ROOT", tmp_path)
    before = registry._grading_digest("demo", b"toml", [])
    (folder / "tensors.npz").write_bytes(b"one")
    with_data = registry._grading_digest("demo", b"toml", [])
    (folder / "tensors.npz").write_bytes(b"two")
    assert len({before, with_data, registry._grading_digest("demo", b"toml", [])}) == 3
