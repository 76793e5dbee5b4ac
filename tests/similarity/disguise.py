"""What a student who copies does to hide it: rename every local name and reorder the functions."""

from __future__ import annotations

import ast
import random


def disguise(source: str, seed: int) -> str:
    """`source` with each function's parameters and local variables renamed and the top-level
    functions shuffled (comments and formatting are lost to ast.unparse, as to a reformatter)."""
    tree = ast.parse(source)
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    keep = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            keep |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    local = set()
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.arg):
                local.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
    rng = random.Random(seed)
    renamed = {name: f"{rng.choice(['val', 'tmp', 'item', 'buf'])}_{i}" for i, name in enumerate(sorted(local - keep))}

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            node.id = renamed.get(node.id, node.id)
            return node

        def visit_arg(self, node):
            node.arg = renamed.get(node.arg, node.arg)
            return node

    tree = Rename().visit(tree)
    rng.shuffle(functions)
    tree.body = [node for node in tree.body if not isinstance(node, ast.FunctionDef)] + functions
    return ast.unparse(tree) + "\n"
