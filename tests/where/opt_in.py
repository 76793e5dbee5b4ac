"""The tests under tests/where change the machine: they build images of a few GB into CACHE_ROOT
(from Debian's archive and PyPI), boot a VM under qemu, and may start a Docker daemon as root.
A test run does none of that unless asked: CS349E_TEST_VM=1 for the cgroup v2 machine,
CS349E_TEST_DOCKER=1 for the Gradescope container (.ci/run sets both). Without them the tests
skip and say how to run them."""

from __future__ import annotations

import os

VM = "CS349E_TEST_VM"
DOCKER = "CS349E_TEST_DOCKER"
WHAT = {VM: "boots a Debian VM under qemu and builds its image (a few GB) in the where-cache",
        DOCKER: "uses (and, as root, starts if none runs) a Docker daemon and builds an image in it"}


def not_asked(variable: str) -> str | None:
    """None when `variable`=1 asks for these tests, else the skip reason saying how to ask."""
    if os.environ.get(variable) == "1":
        return None
    return f"not asked: this test {WHAT[variable]}; set {variable}=1 to run it"
