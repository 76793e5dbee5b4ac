"""Boots the cgroup v2 machine (vm_image) under qemu and runs one command in it.

nested KVM does not work on the machines this runs on, so qemu emulates (TCG, two threads).
The disk is used as a snapshot: every run boots the same clean system. A second disk, made per
run (ext4, from a folder: nothing is mounted on the host), carries run.sh and a copy of the
checkout in, and the command's output and exit status out (read back with debugfs). run.sh
copies the checkout to the same path inside, owned by the user the command runs as, with .venv
pointing at the image's virtualenv. The command runs through a login
(`runuser -l`), so it sits in a systemd session as an instructor's ssh login would, with that
user's systemd manager running.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import process_groups

from .debian import run
from .opt_in import VM, not_asked
from .vm_image import USER, VENV, image_root, vm_image

USERS = ("root", USER)
MEMORY_MIB = 8192
# Real machines read the time from the TSC in user space (vDSO). Under emulation the kernel finds
# the vCPUs' TSCs unsynchronized and falls back to the HPET: every clock read is then a system call
# and an emulated device access under qemu's global lock, so a process reading the clock in a loop
# slows every other vCPU. The emulated TSC is one clock for both vCPUs: use it, as hardware does.
CLOCK = "tsc=reliable clocksource=tsc"
JOB_DISK_SIZE = "2G"  # sparse: the checkout copy, the command's output, room for what it writes
LEFT_BEHIND = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", ".grading_cache",
                                     ".key_cache", ".ipynb_checkpoints")


def machine_problem() -> str | None:
    """None when this machine can boot the VM and the run asked for it (CS349E_TEST_VM=1), else why not."""
    asked = not_asked(VM)
    if asked:
        return asked
    if shutil.which("qemu-system-x86_64") is None:
        return "qemu is not installed (apt-get install qemu-system-x86)"
    for tool in ("mkfs.ext4", "debugfs"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install e2fsprogs)"
    if (image_root() / "ready").exists():
        return None
    if shutil.which("debootstrap") is None:
        return "no cached VM image and no debootstrap to build one (apt-get install debootstrap)"
    if os.geteuid() != 0:
        return "no cached VM image, and building one needs root (debootstrap, chroot)"
    return None


@dataclass(frozen=True)
class VmRun:
    returncode: int | None  # None: the command never finished (see console)
    output: str             # the command's stdout and stderr
    console: str            # the machine's serial console (boot log)
    seconds: float          # the command's own time (inside the machine)

    @property
    def boot_seconds(self) -> float | None:
        """Power-on to the job's start, as the job wrote it on the console (vm_image.JOB_SCRIPT)."""
        booted = re.search(r"where-job: booted in ([0-9.]+) s", self.console)
        return float(booted.group(1)) if booted else None


def _step_script(index: int, user: str, command: list[str], inside: str, env: dict[str, str],
                 carry: tuple[str, ...] = ()) -> str:
    """A fresh copy of the checkout at `inside`, owned by `user`; the command through a login.
    `carry`: folders of the previous step's copy (at the same path) moved into this one first."""
    owner = f'chown -R {user}: "$dest"'
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    inner = f"cd {shlex.quote(inside)} && exec env {exports} {shlex.join(command)}"
    keep = "".join(f'[ -d "$dest"/{shlex.quote(c)} ] && mv "$dest"/{shlex.quote(c)} /where/carried/\n' for c in carry)
    back = "".join(f'[ -d /where/carried/{shlex.quote(c)} ] && mv /where/carried/{shlex.quote(c)} "$dest"/\n' for c in carry)
    return f"""
dest={shlex.quote(inside)}
rm -rf /where/carried; mkdir -p /where/carried
{keep}rm -rf "$dest"; mkdir -p "$dest"
cp -a /where/job/checkout/. "$dest/"
{back}ln -sfn {VENV} "$dest/.venv"
{owner}
d="$dest"; while [ "$d" != / ]; do chmod a+x "$d"; d=$(dirname "$d"); done
start=$(cut -d' ' -f1 /proc/uptime)
runuser -l {user} -c {shlex.quote(inner)} > /where/job/steps/{index}.out 2>&1
echo $? > /where/job/steps/{index}.rc
echo "$start $(cut -d' ' -f1 /proc/uptime)" > /where/job/steps/{index}.uptime
"""


def run_steps(steps: list[tuple[str, list[str]]], checkout: Path, *, inside: str | None = None,
              env: dict[str, str] | None = None, timeout: float = 3600, memory_mib: int = MEMORY_MIB,
              carry: tuple[str, ...] = ()) -> list[VmRun]:
    """Boots the machine once and runs each (user, command) in turn, each in a fresh copy of
    `checkout` at `inside` (default: its own path) owned by that user; then powers off. `carry`:
    folders each step takes over from the step before (e.g. a store of computed keys), owned anew.
    Every step's seconds are its own; the console is the whole boot's."""
    for user, _ in steps:
        if user not in USERS:
            raise ValueError(f"user {user!r} does not exist in the VM; one of {', '.join(USERS)}")
    image = vm_image()
    checkout = checkout.resolve()
    with tempfile.TemporaryDirectory(prefix="cs349e-vm-") as tmp:
        job = Path(tmp) / "job"
        shutil.copytree(checkout, job / "checkout", symlinks=True, ignore=LEFT_BEHIND)
        (job / "steps").mkdir()
        (job / "run.sh").write_text("set -u\n" + "".join(
            _step_script(i, user, command, inside or str(checkout), env or {}, carry if i else ())
            for i, (user, command) in enumerate(steps)))
        job_disk = Path(tmp) / "job.img"
        run(["mkfs.ext4", "-q", "-d", str(job), str(job_disk), JOB_DISK_SIZE])
        console = Path(tmp) / "console.log"
        qemu = ["qemu-system-x86_64", "-accel", "tcg,thread=multi", "-cpu", "max", "-smp", "2",
                "-m", str(memory_mib), "-nodefaults", "-display", "none", "-no-reboot",
                "-kernel", str(image / "vmlinuz"), "-initrd", str(image / "initrd.img"),
                "-append", f"root=/dev/vda rw console=ttyS0 quiet systemd.show_status=false panic=-1 {CLOCK}",
                "-drive", f"file={image / 'disk.img'},format=raw,if=virtio,snapshot=on",
                "-drive", f"file={job_disk},format=raw,if=virtio",
                "-serial", f"file:{console}", "-nic", "none"]
        proc = process_groups.start(qemu, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            qemu_out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            qemu_out, _ = proc.communicate()
        process_groups.end(proc)
        boot = (console.read_text(errors="replace") if console.exists() else "") + qemu_out.decode(errors="replace")
        back = Path(tmp) / "back"
        back.mkdir()
        subprocess.run(["debugfs", "-R", f"rdump /steps {back}", str(job_disk)], capture_output=True)
        runs = []
        for index in range(len(steps)):
            def read(suffix: str) -> str:
                path = back / "steps" / f"{index}.{suffix}"
                return path.read_text(errors="replace") if path.exists() else ""
            rc, uptime = read("rc").strip(), read("uptime").split()
            seconds = float(uptime[1]) - float(uptime[0]) if len(uptime) == 2 else 0.0
            runs.append(VmRun(int(rc) if rc else None, read("out"), boot, seconds))
        return runs


def run_in_vm(command: list[str], checkout: Path, *, user: str = "root", **kwargs) -> VmRun:
    """Boots the machine, runs `command` as `user` (root or the image's non-root user) in a copy
    of `checkout`, and powers off."""
    return run_steps([(user, command)], checkout, **kwargs)[0]
