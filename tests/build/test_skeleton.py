"""The skeleton keeps everything but the solution bodies, and refuses regions it cannot stub cleanly."""

import ast
from pathlib import Path

import pytest

from autograder.build.markers import MarkerError, find_regions
from autograder.build.skeleton import make_skeleton

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "solutions" / "lec01_codesign" / "codesign.py"


def _functions(tree):
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_each_graded_body_becomes_one_raise_naming_its_function():
    skeleton = make_skeleton(REFERENCE.read_text(encoding="utf-8"), "codesign.py")
    tree = ast.parse(skeleton.text)
    for name in skeleton.functions:
        body = _functions(tree)[name].body
        assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)  # the docstring
        (stub,) = body[1:]
        assert isinstance(stub, ast.Raise) and stub.exc.func.id == "NotImplementedError"
        assert stub.exc.args[0].value.startswith(f"{name} 还没有实现")


def test_signatures_docstrings_and_module_level_code_are_kept_verbatim():
    source = REFERENCE.read_text(encoding="utf-8")
    ref_tree, skel_tree = ast.parse(source), ast.parse(make_skeleton(source, "codesign.py").text)
    assert ast.get_docstring(skel_tree) == ast.get_docstring(ref_tree)
    ref_funcs, skel_funcs = _functions(ref_tree), _functions(skel_tree)
    assert ref_funcs.keys() == skel_funcs.keys()
    for name, ref in ref_funcs.items():
        assert ast.dump(skel_funcs[name].args) == ast.dump(ref.args)
        assert ast.get_docstring(skel_funcs[name]) == ast.get_docstring(ref)
    top_level = [ast.dump(n) for n in ref_tree.body if not isinstance(n, ast.FunctionDef)]
    assert [ast.dump(n) for n in skel_tree.body if not isinstance(n, ast.FunctionDef)] == top_level


def test_no_solution_line_survives():
    source = REFERENCE.read_text(encoding="utf-8")
    text = make_skeleton(source, "codesign.py").text
    body_lines = {line.strip() for r in find_regions(source, "codesign.py") for line in r.body if line.strip()}
    assert not body_lines & {line.strip() for line in text.splitlines()} - {"", '"""'}


def test_a_region_outside_any_function_is_refused():
    with pytest.raises(MarkerError, match="outside any function"):
        make_skeleton("### BEGIN SOLUTION\nX = 1\n### END SOLUTION\n", "m.py")


def test_two_regions_in_one_function_are_refused():
    source = ("def f():\n    ### BEGIN SOLUTION\n    a = 1\n    ### END SOLUTION\n"
              "    ### BEGIN SOLUTION\n    return a\n    ### END SOLUTION\n")
    with pytest.raises(MarkerError, match="more than one solution region in f"):
        make_skeleton(source, "m.py")


def test_a_file_without_regions_is_refused():
    with pytest.raises(MarkerError, match="no solution region"):
        make_skeleton("def f():\n    return 1\n", "m.py")
