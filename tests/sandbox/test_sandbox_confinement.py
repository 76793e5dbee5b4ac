"""Does a sandbox say how it was confined (isolation, quotas, private scratch, CPU placement) as
the confinement module chose it for this grader process, and does a machine without a group for
the sandbox give it the empty group of NoQuota rather than none?"""

from __future__ import annotations

from sandbox_helpers import FAST, needs_bwrap

from autograder.sandbox import cgroups, confinement, placement

OK = {"codesign.py": "def ok(x):\n    return x\n"}


@needs_bwrap
def test_a_bubblewrap_sandbox_records_the_confinement_that_ran_it(sandbox):
    chosen = confinement.confinement(confinement.BUBBLEWRAP, FAST.cpu_share)
    box = sandbox(OK)
    assert box.call("codesign", "ok", (1,)).value == 1
    assert box.isolation == chosen.isolation.name and box.quotas == chosen.quota.name
    assert box.confinement == chosen.phrase
    assert box.private_scratch is True   # bubblewrap's /tmp and /dev/shm are tmpfs of its own
    assert bool(box.cpus) is (placement.problem(FAST.cpu_share) is None)


@needs_bwrap
def test_without_a_group_the_sandbox_gets_no_quota_and_an_empty_group(sandbox, monkeypatch):
    monkeypatch.setattr(cgroups, "create", lambda limits: None)   # no group could be made
    box = sandbox(OK)
    assert box.call("codesign", "ok", (2,)).value == 2
    assert box.quotas == confinement.NO_QUOTA.name and not confinement.NO_QUOTA.per_sandbox
    group = box._resources.cgroup
    assert group is cgroups.NO_GROUP and group.prefix() == () and group.cpu_seconds() is None


def test_each_quota_backend_fits_exactly_one_kind_of_layout():
    """v1, v2 as root, v2 delegated to a non-root grader: the probe's layout decides the class."""
    for files in (cgroups._V1Files, cgroups._V2Files):
        layout = cgroups._Layout(files, {})
        fitting = [kind for kind in confinement.QUOTA_KINDS[:-1] if kind.fits(layout)]
        assert len(fitting) == 1, (files, fitting)
