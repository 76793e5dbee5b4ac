"""On a booted cgroup v2 system (Debian 12 with systemd, under qemu: tests/where/vm.py), as a
non-root instructor (the quotas sit in controllers systemd delegates to that user's manager): a
CPU hog beside an honest classmate at -j 2 changes neither the classmate's score nor (by 1.5x or
more) its grading time; two memory hogs of 5 x 1 GiB each keep the whole grading under 5 GiB;
every result records that cgroup v2 carried the quotas. Then as root (the whole hierarchy is
root's: nothing delegated to depend on) the memory scenario alone; emulated, the CPU scenario's three
gradings of a notebook are most of a pass's time, and root's would repeat the instructor's.

Skipped, with the reason, where this machine cannot boot the VM or build its image."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from where import quota_scenarios
from where.debian import CannotBuild
from where.vm import USER, USERS, machine_problem, run_steps

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]
GIB = 1024**3
PARTS = {"root": "memory", USER: "cpu,memory"}  # quota_scenarios.py's parts each user runs


ORDER = (USER, "root")  # root's students are among the instructor's: root takes over their stored keys
assert set(ORDER) == set(USERS) and set(PARTS[ORDER[1]].split(",")) <= set(PARTS[ORDER[0]].split(","))


@pytest.fixture(scope="module")
def booted() -> dict:
    """One boot; the non-root instructor's scenarios, then root's, each in its own copy of the
    checkout. Root's copy takes over the instructor's store of answer keys (.key_cache, owned anew
    by root): computing them again, emulated, was about 150 s of an untimed prepare.

    Where its time goes (measured on the 2-core machine, busy with other work: 658 s in all): the
    boot 18 s; the instructor's pass 507 s, of which the prepare 135 s (the reference's end-to-end
    forward pass, once, for the students' keys), the CPU scenario 306 s (alone 58, beside the hog
    166: the hog's own grading, slowed by its spinners, must outlast the classmate's, alone again
    82) and the memory scenario 60 s; root's pass 120 s (prepare 19, memory 96); copies, power-off
    and the host's side about 12 s (qemu used 649 s of CPU in all). Machine set-up (system,
    virtualenv, users) is all in the image already: what is left is the scenarios' own work."""
    problem = machine_problem()
    if problem:
        pytest.skip(f"cannot boot the cgroup v2 machine here: {problem}")
    command = [".venv/bin/python", "tests/where/quota_scenarios.py", "--parts"]
    try:
        runs = run_steps([(user, [*command, PARTS[user]]) for user in ORDER], ROOT, carry=(".key_cache",))
    except CannotBuild as exc:
        pytest.skip(f"cannot build the cgroup v2 machine's image here: {exc}")
    return dict(zip(ORDER, runs))


def report_of(booted: dict, user: str) -> dict:
    done = booted[user]
    lines = [line for line in done.output.splitlines() if line.startswith("WHERE-RESULT ")]
    assert done.returncode == 0 and lines, f"exit {done.returncode}\n{done.output[-4000:]}\n{done.console[-3000:]}"
    report = json.loads(lines[-1].removeprefix("WHERE-RESULT "))
    report["user"] = user
    summary = {part: {key: report[part][key] for key in ("seconds", "tree_pss_bytes", "machine_bytes", "scores", "times",
                                                         "recorded", "csv")}
               for part in ("cpu_alone", "cpu_beside", "cpu_alone_after", "memory") if part in report}
    print(f"\n[{user}] {done.seconds:.0f} s in the VM after a {done.boot_seconds or 0:.0f} s boot "
          f"(prepare {report['prepare_seconds']:.0f} s), "
          f"{report['cgroup']}: {json.dumps(summary, ensure_ascii=False)}")
    return report


@pytest.fixture(scope="module")
def reports(booted) -> dict:
    """Each user's report, read (and its summary printed) once."""
    return {user: report_of(booted, user) for user in USERS}


@pytest.fixture(scope="module", params=USERS)
def scenario(request, reports) -> dict:
    return reports[request.param]


@pytest.fixture(scope="module")
def instructor(reports) -> dict:
    """The non-root instructor's pass, the one that runs the CPU scenario."""
    return reports[USER]


def mechanism(recorded: dict) -> str:
    """What a result says isolated the student and carried its quotas, e.g. 'bubblewrap + cgroup v2'."""
    quotas = recorded.get("quotas") or recorded.get("quota")
    isolation = recorded.get("isolation", "")
    return f"{isolation} + {quotas}" if quotas and str(quotas) not in isolation else isolation


def test_the_machine_is_cgroup_v2(scenario):
    facts = scenario["cgroup"]
    assert facts["fs"] == "cgroup2fs" and facts["own"].startswith("0::/")
    assert (facts["uid"] == 0) == (scenario["user"] == "root")


def test_root_took_over_the_keys_the_instructor_stored(reports):
    """The instructor's pass starts from an empty store; root's finds every key of its students in it."""
    assert reports[USER]["keys_stored_before"] == []
    root = reports["root"]
    assert sorted(root["keys_stored_before"]) == sorted(quota_scenarios.PARTS["memory"]), root["keys_stored_before"]


def test_a_cpu_hog_leaves_the_classmates_score_alone(instructor):
    alone, beside = instructor["cpu_alone"], instructor["cpu_beside"]
    assert "alice" in alone["scores"], alone["log"]
    assert "alice" in beside["scores"], f"the classmate was not graded beside the hog:\n{beside['log']}"
    assert alone["scores"]["alice"] == beside["scores"]["alice"] > 0, \
        f"alone lost {alone.get('lost', {}).get('alice')}, beside the hog lost {beside.get('lost', {}).get('alice')}"


# Measured here: 0.93x-1.24x with each sandbox on a CPU of its own (placement.py), 0.98x-1.43x
# without; with a /proc monitor sampling 5 times a second beside them 1.30x-1.35x placed and
# 1.65x-1.69x not (the hog's spinners spread over both CPUs and crowd the classmate's). Timed runs
# therefore sample nothing (quota_scenarios.py), and the machine reads its clock from the TSC (vm.py).
def test_a_cpu_hog_slows_the_classmate_by_less_than_1_5x(instructor):
    alone, beside, after = instructor["cpu_alone"], instructor["cpu_beside"], instructor["cpu_alone_after"]
    alone_seconds = (alone["times"]["alice"] + after["times"]["alice"]) / 2
    ratio = beside["times"]["alice"] / alone_seconds
    assert ratio < 1.5, (f"the classmate took {ratio:.2f}x as long beside the hog (alone {alone['times']['alice']:.1f} s "
                         f"and {after['times']['alice']:.1f} s, beside {beside['times']})")


def test_two_memory_hogs_keep_the_grading_under_5_gib(scenario):
    memory = scenario["memory"]
    assert memory["tree_pss_bytes"] < 5 * GIB, f"the grading tree held {memory['tree_pss_bytes'] / GIB:.2f} GiB"
    assert memory["machine_bytes"] < 5 * GIB, f"the machine had {memory['machine_bytes'] / GIB:.2f} GiB more in use"
    assert memory["returncode"] == 0, f"grader errors beside the memory hogs:\n{memory['log']}"


def test_every_result_records_cgroup_v2_quotas(scenario):
    for part in [p for p in ("cpu_beside", "memory") if p in scenario]:  # root's pass has no CPU scenario
        for student, recorded in scenario[part]["recorded"].items():
            assert "cgroup v2" in mechanism(recorded), f"{part}/{student} recorded {recorded}"
        for student, columns in scenario[part]["csv"].items():
            assert any("cgroup v2" in (v or "") for v in columns.values()), f"grades.csv says {columns} for {student}"
