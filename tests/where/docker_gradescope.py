"""The Gradescope bundle in a Docker container started with Docker's defaults (its default
seccomp profile and capabilities, no --privileged), on an image imported from a debootstrap
Debian 12 root — no registry pull.

The image is built as Gradescope builds it: the bundle unpacked in /autograder/source, its
setup.sh run as root (apt and PyPI: the one step with a network; the host's CA bundle is mounted
for pip). It is cached by the recipe of setup.sh + requirements.txt; every run then copies the
current bundle and one submission into a fresh container with no network and runs
/autograder/run_autograder as shipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

import process_groups

from .cache import CACHE_ROOT, cached_build, recipe_key
from .debian import HOST_CA_BUNDLE, MIRROR, SUITE, CannotBuild, debootstrap, run
from .opt_in import DOCKER, not_asked

BASE_TAG = "cs349e-where/debian12"
SETUP_TAG = "cs349e-where/gradescope"
CA_INSIDE = "/etc/ssl/host-ca.crt"


def _docker(*args: str, timeout: float = 600, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and done.returncode != 0:
        raise CannotBuild(f"docker {' '.join(args[:4])} exited {done.returncode}: {done.stderr[-2000:]}")
    return done


def daemon_problem(start: bool = True) -> str | None:
    """None when a Docker daemon answers, else why not. Only when asked (CS349E_TEST_DOCKER=1) and
    `start`, as root, a daemon is started here if none runs; it is ended with the test run
    (tests/process_groups.py)."""
    asked = not_asked(DOCKER)
    if asked:
        return asked
    if shutil.which("docker") is None:
        return "no docker client (apt-get install docker.io)"
    if _docker("info", timeout=60, check=False).returncode == 0:
        return None
    if not start or shutil.which("dockerd") is None or os.geteuid() != 0:
        return "no Docker daemon runs and none can be started here (needs dockerd and root)"
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(CACHE_ROOT / "dockerd.log", "ab") as log:
        process_groups.start(["dockerd", "--iptables=false", "--bridge=none"], stdout=log, stderr=log,
                             stdin=subprocess.DEVNULL)
    stop = time.monotonic() + 60
    while time.monotonic() < stop:
        if _docker("info", timeout=30, check=False).returncode == 0:
            return None
        time.sleep(1)
    return f"dockerd did not come up within 60 s (see {CACHE_ROOT / 'dockerd.log'})"


def _image_exists(tag: str) -> bool:
    return _docker("image", "inspect", tag, check=False, timeout=60).returncode == 0


def _drop_other_tags(repository: str, keep: str) -> None:
    """Older builds of an image (an earlier recipe) are removed once a new one exists."""
    listed = _docker("image", "ls", repository, "--format", "{{.Repository}}:{{.Tag}}", check=False, timeout=60)
    for tag in listed.stdout.split():
        if tag != keep:
            _docker("image", "rm", tag, check=False, timeout=300)


def _build_base(folder: Path) -> None:
    root = folder / "root"
    debootstrap(root, ())
    run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(folder / "rootfs.tar"), "."], timeout=600)
    shutil.rmtree(root)


def base_image() -> str:
    """A docker image of a plain debootstrap Debian 12 (minbase), imported once."""
    key = recipe_key("minbase", SUITE, MIRROR)
    folder = cached_build("docker-base", key, _build_base)
    tag = f"{BASE_TAG}:{key}"
    if not _image_exists(tag):
        with open(folder / "rootfs.tar", "rb") as tar:
            _docker("import", "-", tag, stdin=tar, timeout=900)
        _drop_other_tags(BASE_TAG, tag)
    return tag


def _unpack(bundle: Path, dest: Path) -> None:
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(dest)
        for info in zf.infolist():  # zipfile drops permission bits; Gradescope's unzip keeps them
            if (info.external_attr >> 16) & 0o111:
                target = dest / info.filename
                target.chmod(target.stat().st_mode | 0o755)


def setup_image(bundle: Path) -> tuple[str, float | None]:
    """The image after the bundle's setup.sh, and how long setup.sh took (None: cached)."""
    with zipfile.ZipFile(bundle) as zf:
        recipe = recipe_key(zf.read("setup.sh"), zf.read("requirements.txt"))
    base = base_image()
    tag = f"{SETUP_TAG}:{recipe_key(base, recipe)}"
    if _image_exists(tag):
        return tag, None
    name = f"cs349e-setup-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "autograder" / "source"
        _unpack(bundle, source)
        _docker("create", "--name", name, "--network", "host", "-v", f"{HOST_CA_BUNDLE}:{CA_INSIDE}:ro",
                "-e", f"PIP_CERT={CA_INSIDE}", "-w", "/autograder/source", base,
                "bash", "-c", "bash ./setup.sh && rm -rf /autograder/source /var/lib/apt/lists/*")
        try:
            _docker("cp", str(source.parent), f"{name}:/")
            start = time.monotonic()
            done = _docker("start", "-a", name, timeout=3600, check=False)
            took = time.monotonic() - start
            if done.returncode != 0:
                raise CannotBuild(f"setup.sh failed in Debian 12 (exit {done.returncode}):\n"
                                  f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
            _docker("commit", name, tag, timeout=900)
            _drop_other_tags(SETUP_TAG, tag)
        finally:
            _docker("rm", "-f", name, check=False)
    return tag, took


@dataclass(frozen=True)
class ContainerRun:
    returncode: int
    log: str  # run_autograder's stdout + stderr (Gradescope's staff-only log)
    results: dict | None
    seconds: float


def write_metadata(root: Path, student_id: str) -> None:
    """Gradescope's submission_metadata.json, the part the runner reads: the submitter's sid."""
    users = [{"sid": student_id, "email": f"{student_id}@example.edu", "name": student_id}]
    (root / "submission_metadata.json").write_text(json.dumps({"users": users}), encoding="utf-8")


def run_submission(image: str, bundle: Path, submission: Path, timeout: float = 900,
                   student_id: str | None = None) -> ContainerRun:
    """run_autograder as shipped, in a fresh container with Docker's defaults and no network;
    `student_id` is the submitter's roster id in submission_metadata.json, as Gradescope writes it."""
    name = f"cs349e-grade-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "autograder"
        _unpack(bundle, root / "source")
        shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
        shutil.copytree(submission, root / "submission")
        if student_id is not None:
            write_metadata(root, student_id)
        (root / "results").mkdir()
        _docker("create", "--name", name, "--network", "none", "-w", "/autograder", image,
                "/autograder/run_autograder")
        try:
            _docker("cp", f"{root}/.", f"{name}:/autograder/")
            start = time.monotonic()
            done = _docker("start", "-a", name, timeout=timeout, check=False)
            seconds = time.monotonic() - start
            code = int(_docker("inspect", "-f", "{{.State.ExitCode}}", name).stdout.strip())
            out = Path(tmp) / "out"
            out.mkdir()
            got = _docker("cp", f"{name}:/autograder/results/results.json", str(out), check=False)
            results = json.loads((out / "results.json").read_text(encoding="utf-8")) if got.returncode == 0 else None
        finally:
            _docker("rm", "-f", name, check=False)
    return ContainerRun(code, done.stdout + done.stderr, results, seconds)
