"""The student renamed the file: the grader must say which file it expected."""
