"""A Debian 12 root folder made by debootstrap from Debian's archive, and commands run inside it
(chroot) while an image is built — the only step that uses the network (apt, PyPI)."""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

SUITE = "bookworm"
MIRROR = os.environ.get("CS349E_WHERE_MIRROR", "http://deb.debian.org/debian")
# The CA bundle of this machine: pip inside the image reaches PyPI through it while building.
HOST_CA_BUNDLE = Path(os.environ.get("PIP_CERT") or "/etc/ssl/certs/ca-certificates.crt")


class CannotBuild(RuntimeError):
    """This machine lacks what an image build needs (debootstrap, network, ...)."""


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise CannotBuild(f"{' '.join(cmd[:6])} ... exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def debootstrap(root: Path, packages: tuple[str, ...]) -> None:
    if shutil.which("debootstrap") is None:
        raise CannotBuild("debootstrap is not installed (apt-get install debootstrap)")
    include = [f"--include={','.join(packages)}"] if packages else []
    run(["debootstrap", "--variant=minbase", *include, SUITE, str(root), MIRROR], timeout=3600)
    # debootstrap leaves its own archive of every .deb it installed
    shutil.rmtree(root / "var/cache/apt/archives", ignore_errors=True)
    (root / "var/cache/apt/archives/partial").mkdir(parents=True, exist_ok=True)


@contextmanager
def chroot_session(root: Path):
    """/proc, /dev, the host's DNS and CA bundle available in `root` while building; all removed after."""
    mounts = [("proc", root / "proc", ["-t", "proc", "proc"]), ("dev", root / "dev", ["--bind", "/dev"])]
    made = []
    resolv = root / "etc/resolv.conf"
    resolv.unlink(missing_ok=True)
    resolv.write_text(Path("/etc/resolv.conf").read_text())
    shutil.copy2(HOST_CA_BUNDLE, root / "tmp/host-ca.crt")
    try:
        for _, target, args in mounts:
            run(["mount", *args, str(target)])
            made.append(target)
        yield
    finally:
        for target in reversed(made):
            subprocess.run(["umount", "-l", str(target)], check=False)
        (root / "tmp/host-ca.crt").unlink(missing_ok=True)


def in_chroot(root: Path, script: str, timeout: float = 3600) -> str:
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
           "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive", "PIP_CERT": "/tmp/host-ca.crt",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1"}
    return run(["chroot", str(root), "/bin/bash", "-euo", "pipefail", "-c", script], env=env, timeout=timeout).stdout
