"""Turns the engine's results.json for one student into the file Gradescope reads.

The engine already writes Gradescope's format (OUT/results/<student>.json, the full
SubmissionResult in extra_data.submission). Inside Gradescope we add what only this context
knows: when students may see the hidden tests' details, that the bundle lowered isolation to
rlimits, which expected files the upload lacked; and, when grading itself
failed, a result that gives no credit and says why.
"""

from autograder.engine.outputs import GRADESCOPE_OUTPUT_FORMAT
from autograder.sandbox.confinement import isolation_named

FALLBACK_NOTE = (
    "⚠️ 注意：这次评分按课程的设置没有使用 bubblewrap 沙箱（isolation 'rlimits'）：学生代码以独立的"
    "非特权用户在带资源限制的子进程里运行，参考答案和隐藏测试对它不可读。分数照常由可信评分器计算。"
)
AUTOMATIC_FALLBACK_NOTE = (
    "⚠️ 注意：这个评分容器里不能使用 bubblewrap 沙箱，这次评分自动改用了备用隔离方式（isolation "
    "'rlimits'）：学生代码以独立的非特权用户在带资源限制的子进程里运行，参考答案和隐藏测试对它不可读，"
    "容器里也只有你这一份提交。分数照常由可信评分器计算。"
)
FAILED_MESSAGE = "评分没有完成，这次提交暂时不计分。请联系助教重新评分（不是你的代码的问题时，重新评分后会按正常结果计分）。"
FALLBACK_LOG = ("NOTE: this bundle was built with --isolation rlimits: student code ran without bubblewrap, "
                "as an unprivileged uid of its own with rlimits; /autograder/source was closed to it.")


def fallback_note(isolation: str | None) -> str | None:
    """The notice results.json must carry for this isolation, or None when none is needed."""
    named = isolation_named(isolation) if isinstance(isolation, str) else None
    if named is not None and named.known:   # bubblewrap, or nothing of the student's ever ran
        return FALLBACK_NOTE if named.lowered else None
    return f"⚠️ 注意：评分器报告了未知的隔离方式 {isolation!r}，请联系助教核对。"


def missing_files_note(missing: tuple[str, ...]) -> str | None:
    if not missing:
        return None
    return f"提交里没有找到 {'、'.join(missing)}：这些文件按缺失评分（文件名要和作业里的一致）。"


def final_results(engine: dict, *, visibility: str, missing: tuple[str, ...] = (),
                  automatic_fallback: str | None = None) -> dict:
    """The engine's results with Gradescope-only settings and notes applied. `automatic_fallback`:
    why bubblewrap could not run in this container, when the bundle's "best" isolation fell back
    to the uid fallback (the student is told that it did; the reason stays in extra_data)."""
    isolation = engine.get("extra_data", {}).get("submission", {}).get("isolation")
    lowered = isinstance(isolation, str) and isolation_named(isolation).lowered
    note = AUTOMATIC_FALLBACK_NOTE if automatic_fallback and lowered else fallback_note(isolation)
    notes = [note for note in (note, missing_files_note(missing)) if note]
    tests = [{**test, "visibility": visibility, "output_format": GRADESCOPE_OUTPUT_FORMAT} for test in engine["tests"]]
    extra = dict(engine.get("extra_data", {}))
    if automatic_fallback:
        extra["isolation_note"] = (f"bubblewrap cannot run in this container ({automatic_fallback}); "
                                   f"graded with the uid fallback automatically")
    return {
        **engine,
        "extra_data": extra,
        "output": "\n\n".join([*notes, engine.get("output", "")]).strip(),
        "output_format": GRADESCOPE_OUTPUT_FORMAT,   # whatever an older results.json said
        "visibility": visibility,
        "stdout_visibility": "hidden",  # run_autograder's log is for course staff
        "tests": tests,
    }


def failure_results(reason: str, *, max_score: float, message: str = FAILED_MESSAGE) -> dict:
    """No credit, visible at once, so the student asks for a regrade instead of waiting. The
    student sees one short line (`message`: what to do); `reason` (for the course staff: what
    failed, how to fix the machine) goes only to extra_data, which Gradescope does not show students."""
    return {
        "extra_data": {"grading_failed": reason[-2000:]},
        "score": 0.0,
        "execution_time": 0.0,
        "output": message,
        "output_format": GRADESCOPE_OUTPUT_FORMAT,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [{
            "name": "可信评分器",
            "number": "1",
            "score": 0.0,
            "max_score": max_score,
            "status": "failed",
            "output": message,
            "output_format": GRADESCOPE_OUTPUT_FORMAT,
            "visibility": "visible",
        }],
    }
