"""The cgroup v2 machine's disk: Debian 12 with systemd (cgroup v2, unified, is its default),
Debian's cloud kernel, bubblewrap, Python 3.11 and a virtualenv with the kit's dependencies,
a non-root user, and a boot job that runs what the host put in a shared folder and powers off.

Built once per recipe (this file, the job script, pyproject.toml) into CACHE_ROOT/vm-<hash>/:
vmlinuz, initrd.img and disk.img (ext4, made from the root folder without mounting anything).
Debian's cloud kernel has virtio disks but no 9p, so nothing is shared as a file system."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from .cache import CACHE_ROOT, cached_build, recipe_key
from .debian import MIRROR, SUITE, chroot_session, debootstrap, in_chroot, run

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("systemd", "systemd-sysv", "dbus", "dbus-user-session", "libpam-systemd", "udev", "kmod",
            "linux-image-cloud-amd64", "bubblewrap", "python3", "python3-venv", "procps", "util-linux",
            "passwd", "login", "ca-certificates", "fonts-dejavu-core")
VENV = "/opt/cs349e-venv"
USER = "student"  # the non-root instructor, uid 1000
DISK_SIZE = "6G"

JOB_UNIT = """\
[Unit]
Description=Run the job on the second disk, then power off
After=multi-user.target systemd-logind.service dbus.service dev-vdb.device
Requires=dev-vdb.device
Requires=systemd-logind.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/where-job
StandardOutput=journal+console
StandardError=journal+console

[Install]
WantedBy=multi-user.target
"""

# The host attaches a second disk (ext4, made per run): run.sh and the checkout in; the command's
# output and exit status are written back to it, and the host reads them after power-off.
JOB_SCRIPT = """\
#!/bin/bash
mkdir -p /where/job
mount /dev/vdb /where/job
echo "where-job: booted in $(cut -d' ' -f1 /proc/uptime) s" > /dev/console
bash /where/job/run.sh > /where/job/output 2>&1
echo $? > /where/job/rc
sync
umount /where/job
systemctl poweroff --force
"""



def _dependencies() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    return [*project["dependencies"], *extras.get("instructor", []), *extras.get("test", [])]


def _configure(root: Path) -> None:
    (root / "etc/hostname").write_text("cs349e-v2\n")
    (root / "etc/fstab").write_text("/dev/vda / ext4 rw,relatime 0 1\n")
    unit = root / "etc/systemd/system/where-job.service"
    unit.write_text(JOB_UNIT)
    script = root / "usr/local/sbin/where-job"
    script.write_text(JOB_SCRIPT)
    script.chmod(0o755)
    wants = root / "etc/systemd/system/multi-user.target.wants"
    wants.mkdir(parents=True, exist_ok=True)
    (wants / "where-job.service").symlink_to("/etc/systemd/system/where-job.service")
    for noise in ("getty.target", "systemd-timesyncd.service", "apt-daily.timer", "apt-daily-upgrade.timer",
                  "e2scrub_all.timer", "fstrim.timer"):
        link = root / "etc/systemd/system" / noise
        link.unlink(missing_ok=True)
        link.symlink_to("/dev/null")


def _build(folder: Path) -> None:
    root = folder / "root"
    debootstrap(root, PACKAGES)
    _configure(root)
    deps = " ".join(f"'{d}'" for d in _dependencies())
    with chroot_session(root):
        in_chroot(root, f"""
            useradd --create-home --uid 1000 --shell /bin/bash {USER}
            passwd --delete root >/dev/null
            python3 -m venv {VENV}
            {VENV}/bin/pip install --quiet --upgrade pip
            {VENV}/bin/pip install --quiet --only-binary=:all: {deps}
            chmod -R a+rX {VENV}
            {VENV}/bin/python -c 'import numpy, sys; print(sys.version, numpy.__version__)'
        """)
    kernel = sorted((root / "boot").glob("vmlinuz-*"))[-1]
    initrd = sorted((root / "boot").glob("initrd.img-*"))[-1]
    shutil.copy2(kernel, folder / "vmlinuz")
    shutil.copy2(initrd, folder / "initrd.img")
    run(["mkfs.ext4", "-q", "-L", "root", "-d", str(root), str(folder / "disk.img"), DISK_SIZE], timeout=1800)
    shutil.rmtree(root)


def recipe() -> str:
    return recipe_key(SUITE, MIRROR, *PACKAGES, VENV, USER, DISK_SIZE, JOB_UNIT, JOB_SCRIPT, *_dependencies())


def image_root() -> Path:
    return CACHE_ROOT / f"vm-{recipe()}"


def vm_image() -> Path:
    """CACHE_ROOT/vm-<recipe>/ with vmlinuz, initrd.img and disk.img, built if missing."""
    return cached_build("vm", recipe(), _build)
