"""The student skeleton of a reference module: every solution region becomes one `raise NotImplementedError`.

Everything outside the regions (module docstring, imports, constants, signatures, docstrings) is
kept verbatim, so the skeleton's documentation is the reference's.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from autograder.build.markers import MarkerError, find_regions


@dataclass(frozen=True)
class Skeleton:
    text: str
    functions: tuple[str, ...]  # the functions whose bodies were replaced, in file order


def not_implemented_line(function: str, indent: str) -> str:
    """The stub statement students replace (its message is what pytest's '未实现' summary reports)."""
    return f'{indent}raise NotImplementedError("{function} 还没有实现：删掉这一行，按上面 docstring 的要求写出你的代码")'


def make_skeleton(source: str, filename: str) -> Skeleton:
    """Replace each solution region of `source` by a stub naming its function."""
    regions = find_regions(source, filename)
    if not regions:
        raise MarkerError(f"{filename}: no solution region found; nothing would be left for students to write")
    functions = _enclosing_functions(source, filename, regions)

    lines = source.splitlines()
    out: list[str] = []
    cursor = 0  # index of the next original line to copy
    for region, function in zip(regions, functions):
        out.extend(lines[cursor:region.begin - 1])
        out.append(not_implemented_line(function, region.indent))
        cursor = region.end
    out.extend(lines[cursor:])
    text = "\n".join(out) + "\n"
    try:
        ast.parse(text, filename)
    except SyntaxError as err:  # e.g. a region that was a whole `if` branch with code after it
        raise MarkerError(f"{filename}: the skeleton is not valid Python ({err.msg}, line {err.lineno}); "
                          "a solution region must be a complete function body tail") from None
    return Skeleton(text, tuple(functions))


def _enclosing_functions(source: str, filename: str, regions) -> list[str]:
    """The innermost function around each region; a region outside any function, or two in one, is an error."""
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as err:
        raise MarkerError(f"{filename}: not valid Python ({err.msg}, line {err.lineno})") from None
    defs = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    names = []
    for region in regions:
        # The END marker is a comment after the function's last statement, so only BEGIN must lie inside.
        around = [d for d in defs if d.lineno < region.begin <= d.end_lineno]
        if not around:
            raise MarkerError(f"{filename}:{region.begin}: solution region outside any function")
        names.append(max(around, key=lambda d: d.lineno).name)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise MarkerError(f"{filename}: more than one solution region in {', '.join(repeated)}; use one per function")
    return names
