"""python -m tests.where (from the repository root):

  vm build                                       build (or find) the cached cgroup v2 machine
  vm run [--user root|student] [--checkout DIR] [--inside PATH] -- CMD...
                                                 run CMD in DIR's copy in the booted machine
  docker build [--bundle ZIP]                    build (or find) the Gradescope image
  docker run --bundle ZIP SUBMISSION             grade SUBMISSION there with run_autograder
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/: process_groups
# Running this command is asking for what it does (the test run asks with CS349E_TEST_VM/_DOCKER).
os.environ.setdefault("CS349E_TEST_VM", "1")
os.environ.setdefault("CS349E_TEST_DOCKER", "1")

from .debian import CannotBuild

ROOT = Path(__file__).resolve().parents[2]


def _bundle(path: str | None, checkout: Path) -> Path:
    if path:
        return Path(path)
    out = Path(tempfile.mkdtemp(prefix="cs349e-bundle-")) / "autograder.zip"
    subprocess.run([sys.executable, "-m", "autograder", "gradescope", "lec01_codesign", "--out", str(out)],
                   cwd=checkout, check=True, stdout=subprocess.DEVNULL)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.where", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_subparsers(dest="where", required=True)
    vm = where.add_parser("vm").add_subparsers(dest="verb", required=True)
    vm.add_parser("build")
    vm_run = vm.add_parser("run")
    vm_run.add_argument("--user", default="root")
    vm_run.add_argument("--checkout", default=str(ROOT), help="folder copied into the machine (default: this checkout)")
    vm_run.add_argument("--inside", help="where it is copied to inside (default: the same path)")
    vm_run.add_argument("--timeout", type=float, default=3600)
    vm_run.add_argument("command", nargs=argparse.REMAINDER)
    docker = where.add_parser("docker").add_subparsers(dest="verb", required=True)
    docker_build = docker.add_parser("build")
    docker_build.add_argument("--bundle")
    docker_build.add_argument("--checkout", default=str(ROOT))
    docker_run = docker.add_parser("run")
    docker_run.add_argument("--bundle")
    docker_run.add_argument("--checkout", default=str(ROOT))
    docker_run.add_argument("submission")
    docker_run.add_argument("--student-id", help="the submitter's sid in submission_metadata.json "
                            "(default: the submission folder's name)")
    args = parser.parse_args(argv)

    try:
        if args.where == "vm":
            from . import vm as machine
            problem = machine.machine_problem()
            if problem:
                print(f"cannot run the VM here: {problem}", file=sys.stderr)
                return 3
            if args.verb == "build":
                print(machine.vm_image())
                return 0
            command = args.command[1:] if args.command[:1] == ["--"] else args.command
            if not command:
                parser.error("vm run needs a command after --")
            done = machine.run_in_vm(command, Path(args.checkout), user=args.user, inside=args.inside,
                                     timeout=args.timeout)
            sys.stdout.write(done.output)
            if done.returncode is None:
                sys.stderr.write(done.console[-4000:] + "\nthe command did not finish in the VM\n")
                return 124
            return done.returncode
        from . import docker_gradescope as gs
        problem = gs.daemon_problem()
        if problem:
            print(f"cannot run Docker here: {problem}", file=sys.stderr)
            return 3
        bundle = _bundle(args.bundle, Path(args.checkout))
        image, took = gs.setup_image(bundle)
        if args.verb == "build":
            print(image, f"(setup.sh took {took:.0f} s)" if took is not None else "(cached)")
            return 0
        done = gs.run_submission(image, bundle, Path(args.submission),
                                 student_id=args.student_id or Path(args.submission).resolve().name)
        sys.stderr.write(done.log)
        print(json.dumps(done.results, ensure_ascii=False, indent=1))
        return done.returncode
    except CannotBuild as exc:
        print(f"cannot build the image: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
