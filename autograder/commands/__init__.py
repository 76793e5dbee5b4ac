"""CLI verbs of `python -m autograder`: one module per verb, each with add_parser(subparsers) and run(args)."""
