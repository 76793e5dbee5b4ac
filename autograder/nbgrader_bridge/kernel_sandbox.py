"""The Jupyter kernel `nbgrader autograde` starts for a student, inside bubblewrap.

The kernel sees what the trusted grader's sandbox sees (a read-only system and Python install, a
fresh /proc, /dev and size-capped /tmp, no network, its own pid namespace) plus, read-write, only
that student's autograded folder (its cwd) and a private folder holding the kernel's connection
file and sockets. Nothing else of the course exists inside: not the grader, not solutions/, not
the gradebook, not the pinned results, not another student's folder. The kernel talks to nbgrader
over Unix sockets in the private folder (ZeroMQ's ipc transport): it has no network to reach TCP
on the host's loopback.

Fails closed: without working bubblewrap the kernel does not start, unless the instructor lowers
isolation explicitly with CS349E_ISOLATION=rlimits (the kernel then runs unsandboxed, as nbgrader
runs it by default; scores still come from the pinned results only).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from autograder.nbgrader_bridge.isolation import kernel_isolation
from autograder.sandbox.launcher import _base_env, _bwrap_prefix, _readonly_binds, warn_not_isolated  # the trusted grader's own sandbox
from autograder.sandbox.limits import Limits

KERNEL_HOME = "/tmp/.kernel-home"


def kernel_prefix(folder: Path, private: Path, course: Path | None = None) -> list[str]:
    """bwrap and its options for a kernel running in `folder` with its sockets in `private`;
    `course` is the folder hidden around it (default: nbgrader's, three levels up)."""
    # The grader's worker drops privileges itself with two capabilities; a kernel needs none.
    kept = _bwrap_prefix(None, Limits(), worker_caps=False)
    folder, private = Path(folder).resolve(), str(Path(private).resolve())
    # The course (autograded/<student>/<assignment> is nbgrader's layout, see course.py) becomes an
    # empty read-only tmpfs holding only the student's folder: nothing of it exists inside, and
    # nothing can be created there, even when the course lies below the sandbox's writable /tmp.
    # A read-only root does the same for the folders bwrap creates above the binds.
    course = Path(course).resolve() if course is not None else folder.parents[2]
    return [*kept, "--tmpfs", str(course), *interpreter_binds(course), "--bind", str(folder), str(folder),
            "--remount-ro", str(course), "--bind", private, private, "--remount-ro", "/", "--chdir", str(folder)]


def interpreter_binds(course: Path) -> list[str]:
    """The Python install bound again, read-only, where the course's tmpfs covers it: the README
    puts the virtualenv in the repository's .venv/, which is the course."""
    args = []
    for src, dst in _readonly_binds():
        inside = Path(dst)
        if course in inside.parents:  # (an install that is the course itself stays hidden)
            args += ["--ro-bind", src, dst]
    return args


def kernel_env(isolation: str) -> dict[str, str]:
    """The kernel's whole environment: nothing of the instructor's is inherited under bubblewrap."""
    if isolation != "bubblewrap":
        env = dict(os.environ)
    else:
        # HOME must not be a prefix of the course: IPython would print the student's frames as
        # "~/…/codesign.py", which the feedback could then not recognise as theirs.
        env = _base_env(KERNEL_HOME)
        env.update(TMPDIR="/tmp", MPLCONFIGDIR="/tmp/matplotlib", IPYTHONDIR="/tmp/ipython")
        env.pop("MPLBACKEND", None)  # the notebook's own inline backend, as in Jupyter
    env.pop("CS349E_TRUSTED_GRADING", None)
    env["NBGRADER_EXECUTION"] = "autograde"
    return env


def kernel_problem(course: Path, kernel_name: str = "python3") -> str | None:
    """None if autograde's kernel can start in `course` under bubblewrap, else one line saying why.

    Cheap (one interpreter importing ipykernel, no kernel): the kernel's own command, in the
    sandbox autograde builds, from a scratch folder standing in for a student's."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        argv = list(KernelSpecManager().get_kernel_spec(kernel_name).argv)
    except NoSuchKernel:
        return f"no Jupyter kernel named {kernel_name!r} is installed (pip install ipykernel)"
    if argv[0] in {"python", f"python{sys.version_info[0]}", "python%i.%i" % sys.version_info[:2]}:
        argv[0] = sys.executable   # as jupyter_client does
    with tempfile.TemporaryDirectory(prefix="cs349e-kernel-probe-") as scratch:
        folder, private = Path(scratch, "folder"), Path(scratch, "private")
        folder.mkdir()
        private.mkdir()
        command = [*kernel_prefix(folder, private, course=course), argv[0], "-c", "import ipykernel_launcher"]
        try:
            done = subprocess.run(command, env=kernel_env("bubblewrap"), capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"the notebook kernel's interpreter {argv[0]} does not start in its sandbox: {err}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return f"the notebook kernel's interpreter {argv[0]} does not start in its sandbox: {last}"
    return None


class SandboxedKernelManager(AsyncKernelManager):
    """nbclient's kernel manager for autograde: the kernel command wrapped in bubblewrap."""

    isolation = "bubblewrap"
    _private: str | None = None
    _folder: str | None = None

    async def _async_pre_start_kernel(self, **kw):
        self.isolation = kernel_isolation()
        self._folder = str(kw.get("cwd") or os.getcwd())
        if self.isolation != "bubblewrap":
            warn_not_isolated("autograde's notebook kernel runs as the instructor and can change every file "
                              "of the course; scores still come from the pinned results.")
        else:
            self._private = self._private or tempfile.mkdtemp(prefix="cs349e-kernel-")  # kept on restart
            self.transport = "ipc"
            self.connection_file = os.path.join(self._private, "kernel.json")
            self.ip = os.path.join(self._private, "kernel-ipc")
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        kw["env"] = kernel_env(self.isolation)
        return kernel_cmd, kw

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        if self.isolation != "bubblewrap":
            return cmd
        # In its own pid namespace the kernel's parent is bwrap's pid 1, which ipykernel takes for
        # "my parent exited"; --die-with-parent already ends the sandbox with nbgrader.
        return [*kernel_prefix(Path(self._folder), Path(self._private)), *cmd, "--IPKernelApp.parent_handle=0"]

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if self._private and not restart:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None
