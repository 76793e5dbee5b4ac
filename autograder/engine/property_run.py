"""Running hypothesis over a property: its strategy, its own seed, no local constants.

Both the build's draw of the fixed examples (property_draw.py) and the grader's shrinking of a
failure (properties.py) search this way, so neither depends on which kit modules a process has
imported."""

from __future__ import annotations

from typing import Callable

from autograder.engine.cases import Property
from autograder.engine.property_examples import property_seed


def run_hypothesis(prop: Property, phases: tuple, on_example: Callable[[tuple], None],
                   max_examples: int | None = None) -> None:
    """Run hypothesis over the property's strategy with the property's own seed (public API only).
    Without local constants: which kit modules a process has imported, and from where it runs (a
    cluster worker, a course copy), must not steer the search or its shrinking."""
    from hypothesis import HealthCheck, Verbosity, given, seed, settings

    without_local_constants()

    config = settings(derandomize=False, database=None, max_examples=max_examples or prop.max_examples,
                      deadline=None, phases=phases, suppress_health_check=list(HealthCheck),
                      verbosity=Verbosity.quiet, print_blob=False, report_multiple_bugs=False)

    def property_example(args):
        on_example(args)

    seed(property_seed(prop))(config(given(prop.strategy)(property_example)))()


def without_local_constants() -> None:
    """hypothesis also mixes into its draws the literals of every local module imported so far
    (the engine's, the sandbox's, the reference's), so a number added anywhere in the kit would
    change the case set. Here the examples depend on the strategies and seeds alone. (An internal
    of hypothesis: the file records hypothesis's version, and another version may draw anew.)"""
    from hypothesis.internal.conjecture import providers

    if hasattr(providers, "_get_local_constants"):
        empty = type(providers._local_constants)(
            integers=providers.SortedSet(), floats=providers.SortedSet(key=providers.float_to_int),
            bytes=providers.SortedSet(), strings=providers.SortedSet())
        providers._get_local_constants = lambda: empty
