"""Runs the kit where courses run it, on this machine: a booted cgroup v2 Debian system under
qemu (`vm`) and the Gradescope bundle in a Docker container with Docker's defaults (`docker`).

Images are built once from Debian's archive (debootstrap) and PyPI, and cached outside the
checkout under CACHE_ROOT, keyed by a hash of their recipe; runs never touch the network.
`python -m tests.where --help` from the repository root lists the commands.
"""
