"""The vocabulary an assignment's author writes in, shared by `solutions` and `autograder`.

It depends on neither: `solutions/<name>/` writes its notebook source with these cells and the
build (autograder.build) renders them, without the reference importing the grader.
"""
