"""Does every result of a batch record the confinement that graded it (isolation, quotas,
whether the sandbox's scratch folders were its own and whether it ran on CPUs of its own), and
does the batch's report say the quotas its results record?"""

from autograder.sandbox import confinement, placement
from engine.conftest import TEST_LIMITS


def test_every_result_records_the_confinement_that_graded_it(graded_batch):
    results = [graded_batch.result(student) for student in graded_batch.recorded_students()]
    ran = [r for r in results if confinement.isolation_named(r.isolation).ran]
    assert ran, "the corpus ran somebody's code"
    assert {r.isolation for r in ran} == {graded_batch.report.isolation}
    assert {r.private_scratch for r in ran} == {confinement.isolation_named(graded_batch.report.isolation).private_scratch}
    assert {r.disk_cap for r in ran} <= {"tmpfs", "watchdog"}   # how the total it wrote was capped
    placed = placement.problem(TEST_LIMITS.cpu_share) is None
    assert {r.placed for r in ran} == {placed}
    assert graded_batch.report.quotas == " / ".join(sorted({r.quotas for r in ran}))
    nothing_ran = [r for r in results if r not in ran]
    assert all(r.private_scratch is None and r.placed is None and r.disk_cap is None for r in nothing_ran)
