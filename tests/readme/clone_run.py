"""A fresh clone of this checkout, and a shell in it as an instructor would have one.

The clone is `git clone` of HEAD with the working tree's uncommitted changes laid over it, so the
test runs the current code. Commands run in bash as an unprivileged account (created once with
useradd; nbgrader is normally run that way), in a mount namespace of their own where /tmp and
/srv (nbgrader's exchange) are private folders of the test: README paths such as /tmp/ref/alice
are written verbatim without touching the machine's.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ACCOUNT = "cs349e-instructor"
PATH = "/usr/local/bin:/usr/bin:/bin"


def clone_checkout(dest: Path, source: Path = ROOT) -> Path:
    """`git clone` of `source`'s HEAD into `dest`, plus its uncommitted changes (new, changed and
    deleted files; ignored ones left out)."""
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(source), str(dest)], check=True,
                   capture_output=True, text=True)
    listed = subprocess.run(["git", "ls-files", "-z", "--modified", "--others", "--exclude-standard"], cwd=source,
                            check=True, capture_output=True).stdout.decode().split("\0")
    deleted = set(subprocess.run(["git", "ls-files", "-z", "--deleted"], cwd=source, check=True,
                                 capture_output=True).stdout.decode().split("\0"))
    for name in filter(None, listed):
        path = source / name
        if name in deleted or not path.exists():
            (dest / name).unlink(missing_ok=True)
        elif path.is_file() and not path.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / name)
    return dest


def instructor_account() -> tuple[int, int] | None:
    """(uid, gid) of the unprivileged account the commands run as, or None to run them as root
    (when the account cannot be made, or cannot run a python3 >= 3.11 from PATH)."""
    try:
        entry = pwd.getpwnam(ACCOUNT)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/bin/bash",
                               ACCOUNT], capture_output=True, text=True)
        if made.returncode not in (0, 9):   # 9: made meanwhile by another run
            return None
        entry = pwd.getpwnam(ACCOUNT)
    probe = subprocess.run(["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
                            "python3", "-c", "import sys; sys.exit(sys.version_info < (3, 11))"],
                           env={"PATH": PATH}, capture_output=True)
    return (entry.pw_uid, entry.pw_gid) if probe.returncode == 0 else None


@dataclass
class Shell:
    """Runs README commands in `base`: the clone is base/course, private /tmp and /srv live in base."""
    base: Path
    env: dict[str, str]
    account: tuple[int, int] | None
    binds: list[tuple[Path, Path]] = field(default_factory=list)   # (host, inside) read-only

    @property
    def course(self) -> Path:
        return self.base / "course"

    def prefix(self) -> list[str]:
        args = ["bwrap", "--dev-bind", "/", "/", "--bind", str(self.base / "tmp"), "/tmp",
                "--bind", str(self.base / "srv"), "/srv", "--bind", str(self.base), str(self.base)]
        for host, inside in self.binds:
            args += ["--ro-bind", str(host), str(inside)]
        args += ["--die-with-parent", "--"]
        if self.account is not None:
            uid, gid = self.account
            args += ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
        return args

    def python3(self) -> str:
        """The `python3` the README's commands run."""
        return shutil.which("python3", path=self.env["PATH"])

    def give(self, path: Path) -> None:
        """`path` (made by the test) owned by the account the commands run as."""
        if self.account is not None:
            subprocess.run(["chown", "-R", f"{self.account[0]}:{self.account[1]}", str(path)], check=True)

    def popen_args(self, command: str, cwd: Path, env: dict[str, str] | None = None) -> dict:
        return dict(args=[*self.prefix(), "bash", "-c", command], cwd=cwd, env={**self.env, **(env or {})})

    def run(self, command: str, *, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(**self.popen_args(command, cwd or self.course, env), capture_output=True, text=True,
                              timeout=timeout)


def make_shell(base: Path, env: dict[str, str], binds: list[tuple[Path, Path]]) -> Shell:
    """A Shell over `base` (its course/ already cloned), owned by the instructor account."""
    for name in ("tmp", "srv/nbgrader/exchange", "home", "jupyter"):
        (base / name).mkdir(parents=True, exist_ok=True)
    # The machine's settings for nbgrader's exchange, as an administrator sets them (the default
    # /usr/local/share/nbgrader/exchange is not the test's to create).
    (base / "jupyter" / "nbgrader_config.py").write_text('c.Exchange.root = "/srv/nbgrader/exchange"\n')
    (base / "tmp").chmod(0o1777)
    account = instructor_account() if os.geteuid() == 0 else None
    path = PATH
    if account is not None:
        subprocess.run(["chown", "-R", f"{account[0]}:{account[1]}", str(base)], check=True)
    elif not _python3_ok(PATH):   # root, with the Python running the tests
        path = os.pathsep.join([str(Path(sys._base_executable).parent), PATH])
    home = base / "home"
    env = {"PATH": path, "HOME": str(home), "USER": ACCOUNT if account else "root", "LANG": "C.UTF-8",
           "BROWSER": "true", "JUPYTER_CONFIG_DIR": str(base / "jupyter"), **env}   # BROWSER: `jupyter lab` opens no browser window
    return Shell(base=base, env=env, account=account, binds=binds)


def _python3_ok(path: str) -> bool:
    python = shutil.which("python3", path=path)
    return python is not None and subprocess.run(
        [python, "-c", "import sys; sys.exit(sys.version_info < (3, 11))"], capture_output=True).returncode == 0
