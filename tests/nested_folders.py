"""Folders nested deeper than a path can name or Python's recursion limit reaches, as a student's
mkdir/chdir loop leaves them: made one level at a time through directory descriptors."""

import os


def nest_folders(folder, depth: int, *, name: str = "d", leaf_file: bool = False) -> None:
    """`depth` folders called `name` inside each other below `folder`; with `leaf_file`, a file
    "f" in the innermost."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    if leaf_file:
        with open(os.open("f", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as handle:
            handle.write("x")
    os.close(fd)
