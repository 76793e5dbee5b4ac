"""How student code is confined, as one value: an isolation backend, a quota backend and the CPU
placement policy, chosen once per grader process.

Every decision that depends on how a sandbox is isolated or bounded asks these classes (their
probe, label, strength, network, uid policy, words for the feedback) instead of comparing the
names results record. The names ("bubblewrap", "rlimits", "cgroup v2", …) are spelled here
only; results, logs and the command line carry them as data, and `isolation_named` /
`quota_named` turn a recorded name back into its class (an unknown one into `Unknown…`, which
says so wherever it is shown).

The machine probes themselves live beside the mechanics they test (bwrap.py: bubblewrap;
uid_fallback.py: the uid fallback; cgroups.py: the cgroup layout; placement.py: CPU claims); each runs once per
process.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Mapping

from .outcomes import SandboxUnavailable  # noqa: F401 - raised here, and its old home

# How the nbgrader path (pregrade) lowers isolation: the CLI verbs take --isolation, the
# Gradescope bundle a build flag.
ISOLATION_ENV_VAR = "CS349E_ISOLATION"
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
                "bubblewrap; Arch: pacman -S bubblewrap) or lower isolation explicitly "
                "(--isolation rlimits; CS349E_ISOLATION=rlimits for nbgrader)")


# -- isolation ------------------------------------------------------------------------------------
class Isolation:
    """One way of isolating a sandbox's worker: what the rest of the grader may rely on."""

    name: str
    strength: int = 0          # higher isolates more (the command line lists the strongest first)
    own_network: bool = False  # a network namespace of its own: no port of the host is reachable
    # ... by construction, wherever it runs and with nothing of the host's filesystem (bubblewrap):
    # what a cluster may rely on to take plain TCP (the uid fallback's namespace is this machine's
    # only, and a readable TLS key there could still leave in a student's output)
    sealed_network: bool = False
    pid_namespace: bool = False     # ending its pid 1 ends the whole sandbox; bwrap reports a worker
    #                                 killed by signal N as exit status 128 + N
    dies_with_grader: bool = False  # the start itself ends the sandbox with the grader (--die-with-parent)
    reaps_by_uid: bool = False      # what the worker leaves running is found by the sandbox's uid
    private_scratch: bool = False   # /tmp and /dev/shm are the sandbox's own by construction
    lowered: bool = False      # below bubblewrap: asked explicitly, warned about, noted to students
    ran: bool = True           # student code ran under it ("none": nothing of the student's did)
    known: bool = True
    words: str = ""            # the feedback's sentence, in the students' language

    def problem(self) -> str | None:
        """Why it cannot confine student code on this machine, or None (probed once per process)."""
        return None

    def refusal(self, problem: str) -> str:
        return problem

    def available(self) -> "Isolation":
        """Itself, or SandboxUnavailable saying why not and what to do."""
        problem = self.problem()
        if problem is not None:
            raise SandboxUnavailable(self.refusal(problem))
        return self

    def claims_uid(self) -> bool:
        """Whether each sandbox gets a host uid of its own (uids.py) for its whole life: where the
        grader is root, so the worker can switch to it."""
        return os.geteuid() == 0

    def plan(self, workdir, private_dir, limits, *, uid: int, env: dict[str, str]):
        raise SandboxUnavailable(f"isolation {self.name!r} starts no worker")

    def forks_here(self) -> bool:
        """Whether this grader's workers may come from the fork server at all (forkserver_client)."""
        return False

    def forkable(self, plan) -> bool:
        """Whether a worker forked from the fork server ends up as this plan's started one would."""
        return False

    def stands_for(self, asked: "Isolation") -> bool:
        """Does a result isolated this way stand for a run asked to isolate as `asked`? Only the
        same isolation does, or a result of which nothing ran."""
        return self is asked or not self.ran

    def __repr__(self) -> str:
        return f"<isolation {self.name}>"


class Bubblewrap(Isolation):
    name, strength, own_network, sealed_network, private_scratch = "bubblewrap", 2, True, True, True
    pid_namespace = dies_with_grader = True
    words = "你的代码在 bubblewrap 沙箱里运行（隔离方式：bubblewrap）。"

    def problem(self):
        from . import bwrap
        return bwrap.bubblewrap_problem()

    def refusal(self, problem):
        return f"bubblewrap cannot sandbox student code here ({problem}); to grade, {INSTALL_HINT}"

    def plan(self, workdir, private_dir, limits, *, uid, env):
        from . import bwrap
        return bwrap.bubblewrap_plan(self, workdir, private_dir, limits, uid=uid, env=env)

    def forks_here(self):
        return os.geteuid() == 0

    def forkable(self, plan):
        # As root only: the forked worker switches to its sandbox's uid like a started one; in a
        # user namespace the fork server could not enter the sandbox's namespaces.
        return plan.drop_to is not None


class UidFallback(Isolation):
    """The explicit fallback: an unprivileged uid of the sandbox's own, rlimits, and the
    namespaces the platform allows a root grader (a mount namespace for its scratch, a network
    namespace of its own), none of them by construction."""

    name, strength, lowered, reaps_by_uid = "rlimits", 1, True, True
    words = ("你的代码以独立的非特权用户、在带资源限制的子进程里运行，没有 bubblewrap 沙箱"
             "（隔离方式：rlimits）。")

    def problem(self):
        from . import uid_fallback
        return uid_fallback.rlimits_problem()

    def refusal(self, problem):
        return f"isolation 'rlimits' refused: {problem}"

    @property
    def own_network(self) -> bool:
        """Where this machine lets the worker make a network namespace, every worker makes one
        and ends if it cannot (probed once per process); elsewhere it shares the host's."""
        from . import uid_fallback
        return uid_fallback.network_namespace_problem() is None

    def plan(self, workdir, private_dir, limits, *, uid, env):
        from . import uid_fallback
        return uid_fallback.fallback_plan(self, workdir, private_dir, limits, uid=uid, env=env)


class NotRun(Isolation):
    """What a result records when nothing of the student's ran (nothing was submitted)."""

    name, ran = "none", False
    words = "没有运行你的代码（隔离方式：none）。"


class UnknownIsolation(Isolation):
    """A recorded name this kit does not know (a result of another grader): shown as such."""

    known = lowered = False

    def __init__(self, name: str):
        self.name = name
        self.words = f"隔离方式：{name}（未知，请联系助教核对）。"

    def problem(self):
        return f"isolation must be one of {', '.join(repr(n) for n in CHOICES)}, got {self.name!r}"


BUBBLEWRAP, UID_FALLBACK, NOT_RUN = Bubblewrap(), UidFallback(), NotRun()
ISOLATIONS = (BUBBLEWRAP, UID_FALLBACK)          # what may be asked for, strongest first
CHOICES = tuple(i.name for i in ISOLATIONS)      # --isolation
DEFAULT = BUBBLEWRAP
_LEGACY = {"auto": BUBBLEWRAP}   # an old name of bubblewrap: nothing falls back on its own
_BY_NAME = {i.name: i for i in (*ISOLATIONS, NOT_RUN)}


def isolation_named(name: str | Isolation) -> Isolation:
    """The isolation a result or a command line names (an unknown name: UnknownIsolation)."""
    if isinstance(name, Isolation):
        return name
    return _BY_NAME.get(name) or UnknownIsolation(str(name))


def asked(name: str | Isolation) -> Isolation:
    """What `name` asks for, unprobed; ValueError for anything but a choice (or "auto")."""
    chosen = _LEGACY.get(name) if isinstance(name, str) and name in _LEGACY else isolation_named(name)
    if chosen not in ISOLATIONS:
        raise ValueError(f"isolation must be 'bubblewrap' or 'rlimits', got {name!r}")
    return chosen


def choose(name: str | Isolation = DEFAULT) -> Isolation:
    """The isolation to grade with for a request: ValueError for an unknown name,
    SandboxUnavailable (one line: why, and how to get it) where it cannot work here."""
    return asked(name).available()


def from_env(environ: Mapping[str, str] | None = None) -> Isolation:
    """What the nbgrader path asks for: CS349E_ISOLATION=rlimits lowers it, unset (or
    "bubblewrap") keeps bubblewrap; anything else is refused."""
    value = (os.environ if environ is None else environ).get(ISOLATION_ENV_VAR, "").strip()
    chosen = _BY_NAME.get(value or DEFAULT.name)
    if chosen not in ISOLATIONS:
        raise SandboxUnavailable(f"{ISOLATION_ENV_VAR} must be 'bubblewrap' or 'rlimits', got {value!r}")
    return chosen


# -- what a Gradescope bundle asks for ----------------------------------------------------------
class ContainerPolicy:
    """How a Gradescope bundle picks the isolation in its container (baked in at build time)."""

    def __init__(self, name: str, fixed: Isolation | None, note: str):
        self.name, self.fixed, self.note = name, fixed, note

    def choose(self) -> tuple[Isolation, str | None]:
        """(the isolation to grade with, why bubblewrap was not used when the best available
        fell back). A fixed isolation is taken as asked (refused later if unavailable)."""
        if self.fixed is not None:
            return self.fixed, None
        problem = BUBBLEWRAP.problem()
        if problem is None:
            return BUBBLEWRAP, None
        refused = UID_FALLBACK.problem()   # after protect_secrets: the source must be closed by now
        if refused is not None:
            raise SandboxUnavailable(f"bubblewrap cannot run in this container ({problem}), and the uid "
                                     f"fallback is refused too: {refused}")
        return UID_FALLBACK, problem


BEST = ContainerPolicy("best", None, (
    "Student code runs in a bubblewrap sandbox where the container allows it. Where it does not "
    "(Docker's and Kubernetes' default seccomp profile refuses the namespaces bubblewrap needs), the "
    "submission is graded with the uid fallback instead, automatically: student code runs with resource "
    "limits as an unprivileged uid of its own, /autograder/source (solutions/, the hidden tests) is closed "
    "to it, and the container holds no other submission. The result says which was used (extra_data."
    "submission.isolation, and a note to the student); the log says why. Where neither can run, every "
    "submission is refused with no credit and exit status 2."))
CONTAINER_POLICIES = (
    BEST,
    ContainerPolicy(BUBBLEWRAP.name, BUBBLEWRAP, (
        "Student code runs in a bubblewrap sandbox. Where bubblewrap cannot run in the container "
        "(it needs user namespaces or root with CAP_SYS_ADMIN), every submission is refused: it gets "
        "a result with no credit that says so, and run_autograder exits with status 2. Rebuild the "
        "zip with `python -m autograder gradescope {assignment} --isolation rlimits` to lower it.")),
    ContainerPolicy(UID_FALLBACK.name, UID_FALLBACK, (
        "Built with `--isolation rlimits`: student code runs with resource limits as an unprivileged uid "
        "of its own, without bubblewrap; /autograder/source (solutions/, the hidden tests) is closed to it. "
        "Where that uid cannot run the grading Python, submissions are refused instead of graded. "
        "Every result says it was graded under rlimits.")),
)
CONTAINER_CHOICES = tuple(p.name for p in CONTAINER_POLICIES)


def container_policy(name: str) -> ContainerPolicy:
    for policy in CONTAINER_POLICIES:
        if policy.name == name:
            return policy
    raise ValueError(f"isolation must be one of {', '.join(CONTAINER_CHOICES)}, got {name!r}")


# -- quotas -------------------------------------------------------------------------------------
class Quota:
    """How a sandbox's memory, processes and CPU are bounded."""

    name: str
    strength: int = 0
    per_sandbox: bool = True    # one group holds the whole sandbox (else per-process rlimits)
    known: bool = True
    problem: str | None = None  # why there is no group per sandbox (NoQuota only)
    words: str = ""

    def __init__(self, layout=None, problem: str | None = None):
        self._layout = layout
        if problem is not None:
            self.problem = problem

    def create(self, limits):
        """A group for one sandbox, or None where this group could not be made."""
        from .cgroups import SandboxCgroup
        try:
            return SandboxCgroup(self._layout, limits)
        except OSError:
            return None

    def __repr__(self) -> str:
        return f"<quotas {self.name}>"


_WHOLE_SANDBOX = "整个沙箱共用一份内存、进程数和 CPU 上限"


class CgroupV1(Quota):
    name, strength = "cgroup v1", 2
    words = f"{_WHOLE_SANDBOX}（资源限制：cgroup v1）。"

    @staticmethod
    def fits(layout) -> bool:
        return not layout.files.unified


class CgroupV2(Quota):
    name, strength = "cgroup v2", 2
    words = f"{_WHOLE_SANDBOX}（资源限制：cgroup v2）。"

    @staticmethod
    def fits(layout) -> bool:
        return layout.files.unified and os.geteuid() == 0


class CgroupV2Delegated(CgroupV2):
    """A non-root grader in a subtree it owns (a delegated systemd scope, or one root made)."""

    name = "cgroup v2 (delegated)"
    words = f"{_WHOLE_SANDBOX}（资源限制：cgroup v2，委派给教师账户）。"

    @staticmethod
    def fits(layout) -> bool:
        return layout.files.unified and os.geteuid() != 0


class NoQuota(Quota):
    """Per-process rlimits and a small process limit: no group can be written here."""

    name, strength, per_sandbox = "rlimits", 1, False
    words = "内存和 CPU 时间按进程限制（资源限制：rlimits）。"

    def create(self, limits):
        return None


class UnknownQuota(Quota):
    known, per_sandbox = False, False

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.words = f"资源限制：{name}（未知，请联系助教核对）。"

    def create(self, limits):
        return None


QUOTA_KINDS = (CgroupV1, CgroupV2, CgroupV2Delegated, NoQuota)
NO_QUOTA = NoQuota(problem="no cgroup could be made for this sandbox")


def quota_named(name: str) -> Quota:
    """The quota backend a result names, as far as its words and properties go."""
    for kind in QUOTA_KINDS:
        if kind.name == name:
            return kind()
    return UnknownQuota(name)


@functools.cache
def quotas() -> Quota:
    """This grader process's quota backend (the machine does not change between students)."""
    from . import cgroups
    layout = cgroups.probe_layout()
    if isinstance(layout, str):
        return NoQuota(problem=layout)
    return next(kind(layout) for kind in QUOTA_KINDS[:-1] if kind.fits(layout))


def sandbox_group(limits) -> tuple[Quota, object]:
    """(the quotas a new sandbox gets, its group): this process's backend, or NoQuota with an
    empty group where no group could be made for it (cgroups.create)."""
    from . import cgroups
    group = cgroups.create(limits)
    return (quotas(), group) if group is not None else (NO_QUOTA, cgroups.NO_GROUP)


# -- the whole value ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Confinement:
    """How this grader process confines each sandbox: isolation, quotas, and why sandboxes are
    not placed on CPUs of their own ("" where they are)."""

    isolation: Isolation
    quota: Quota
    placement: str = ""

    @property
    def phrase(self) -> str:
        """As logs and results say it, e.g. "bubblewrap + cgroup v2"."""
        return f"{self.isolation.name} + {self.quota.name}"


def confinement(isolation: str | Isolation = DEFAULT, cpu_share: float = 1.0) -> Confinement:
    """The confinement this grader process grades with: the isolation asked for (probed,
    refused with SandboxUnavailable where it cannot work), the quotas and placement the machine
    allows."""
    from . import placement
    return Confinement(choose(isolation), quotas(), placement.problem(cpu_share) or "")
