"""Trusted autograder of the CS349E exercise kit: `python -m autograder <verb>`."""
