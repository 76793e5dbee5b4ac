"""The one door into a student's code: every function call and the notebook run go through
`StudentCode`, and every call outcome (value, exception, timeout, crash, garbage) becomes a
Verdict with a Chinese explanation here (notebook outcomes are judged in report_items).

It also rations the student's time: after a call of a function times out, that function is not
called again in this submission (its remaining cases fail with a note), and once the
submission's overall deadline has passed nothing more is called.

And it bounds what a reply may cost the grader: each call carries a reply bound computed from
the expectation (`reply_bound`), so a reply much larger than the expected value is refused in
the sandbox layer before the parent allocates it, and is a wrong answer ("too_large").
`StudentCode.stream` yields replies as they arrive, so a caller can judge each one and drop it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterator, Sequence

from autograder.engine.cases import Call, Expectation, Raises, Returns, Verdict, render_number
from autograder.engine.checks import describe_type
from autograder.engine.feedback import fenced_text, inline_text
from autograder.sandbox import Call as SandboxCall
from autograder.sandbox import TimeoutCause, refuse_overload
from autograder.sandbox.codec import wire_size
from autograder.sandbox.outcomes import CallOutcome, NotebookOutcome

MESSAGE_CHARS = 300  # exception messages are cut to this length in feedback
CRASHES_BEFORE_GIVING_UP = 2
MAX_CHUNK = 64  # calls per round trip; after a timeout or crash the next batch is a single call
# A reply may take REPLY_FACTOR × the expected value's wire size + REPLY_SLACK bytes (a list of
# floats instead of an array is about 3× larger); a "must raise" case accepts REPLY_SLACK.
REPLY_FACTOR = 4
REPLY_SLACK = 64 * 1024


def reply_bound(expect: Expectation | None) -> int | None:
    """Wire bytes a reply to a call with this expectation may take; None when the expected value
    is not known (a check without `desired`): then the sandbox's own limit applies."""
    if isinstance(expect, Raises):
        return REPLY_SLACK
    desired = getattr(getattr(expect, "check", None), "desired", None)
    if desired is None:
        return None
    return REPLY_FACTOR * wire_size(desired) + REPLY_SLACK


@dataclass(frozen=True)
class Reply:
    """What came back from one call; `outcome` is None when the call was not made."""

    call: Call
    outcome: CallOutcome | None
    skipped: str = ""  # Chinese reason when the call was not made


class StudentCode:
    """Calls into the student's module inside a Sandbox, with a time ration."""

    def __init__(self, sandbox, module: str, *, deadline: float):
        self._sandbox = sandbox
        self.module = module
        self._deadline = deadline  # time.monotonic() after which nothing more is called
        self._usage = sandbox.usage()   # the sandbox's time so far: was it starved? (_skip_reason)
        self._hung: dict[str, str] = {}  # function -> why it is no longer called
        self._crashes: dict[str, int] = {}
        self.import_outcome: CallOutcome | None = None

    # -- loading -------------------------------------------------------------------------
    def load(self) -> CallOutcome:
        """Import the student's module once; later calls are pointless if this fails."""
        self.import_outcome = _not_overloaded(self._sandbox.import_check(self.module))
        return self.import_outcome

    @property
    def loaded(self) -> bool:
        return self.import_outcome is not None and self.import_outcome.ok

    def read_notebook(self, name: str) -> NotebookOutcome:
        """Whether the sandbox reads the notebook (status "ok" or "unreadable"), running none of it:
        asked before any of the student's code ran in this sandbox, its answer is the sandbox's own."""
        outcome = self._sandbox.run_notebook(name, [], read_only=True)
        refuse_overload(outcome.timeout_cause, f"notebook {name}: {outcome.message}")
        return outcome

    def run_notebook(self, name: str, variables: Sequence[str]) -> NotebookOutcome:
        """Execute the student's notebook (in a fresh child of the sandbox); the answers come back
        as plain data. Report items judge the outcome (engine.report_items)."""
        outcome = self._sandbox.run_notebook(name, list(variables))
        refuse_overload(outcome.timeout_cause, f"notebook {name}: {outcome.message}")
        return outcome

    # -- calling -------------------------------------------------------------------------
    def call(self, call: Call, expect: Expectation | None = None) -> Reply:
        return self.call_many([call], [expect])[0]

    def call_many(self, calls: Sequence[Call], expects: Sequence[Expectation | None] | None = None) -> list[Reply]:
        """Every reply of `stream`, as a list (holds them all: prefer `stream` for many calls)."""
        return list(self.stream(calls, expects))

    def stream(self, calls: Sequence[Call], expects: Sequence[Expectation | None] | None = None) -> Iterator[Reply]:
        """Make the calls in order, batched into few sandbox round trips, honouring the ration;
        yield each reply as its batch returns. `expects[i]` (optional) bounds the size of call i's
        reply (`reply_bound`).

        A batch cannot stop half-way, so calls of one function go out in growing chunks
        (1, 4, 16, 64): a function that hangs on every input costs one timeout, not one per case,
        and after a timeout or crash the next call goes alone again.
        """
        if expects is not None and len(expects) != len(calls):
            raise ValueError(f"{len(calls)} calls but {len(expects)} expectations")
        done = 0
        chunk = 1
        while done < len(calls):
            function = calls[done].function
            reason = self._skip_reason(function)
            if reason:
                yield Reply(calls[done], None, reason)
                done += 1
                continue
            # A batch runs to its end, each call up to the call timeout: send no more calls than
            # fit before the deadline, so the submission's budget holds within one call timeout.
            fits = int((self._deadline - time.monotonic()) // self._sandbox.limits.call_timeout)
            batch = []
            for call in calls[done:]:
                if call.function != function or len(batch) == max(1, min(chunk, fits)):
                    break
                batch.append(call)
            bounds = [reply_bound(expects[done + i]) if expects is not None else None for i in range(len(batch))]
            outcomes = self._sandbox.call_many(
                [SandboxCall(self.module, c.function, tuple(c.args), dict(c.kwargs), reply_bytes=bound)
                 for c, bound in zip(batch, bounds)])
            for outcome in outcomes:
                _not_overloaded(outcome)
            troubled = any(o.status in ("timeout", "crashed") for o in outcomes)
            for call, outcome in zip(batch, outcomes):
                self._account(call.function, outcome)
            done += len(batch)
            next_function = calls[done].function if done < len(calls) else None
            chunk = min(chunk * 4, MAX_CHUNK) if next_function == function and not troubled else 1
            while outcomes:   # hand each reply over and forget it
                yield Reply(batch.pop(0), outcomes.pop(0))

    def _skip_reason(self, function: str) -> str:
        if function in self._hung:
            return self._hung[function]
        if time.monotonic() > self._deadline:
            refuse_overload(self._sandbox.deadline_cause(self._usage),
                            "the submission's time for its calls passed while the machine "
                            "gave its sandbox less than half its CPU share")
            return "未运行：这份作业的评分总时间已用完（前面的调用太慢或卡住了）。"
        return ""

    def _account(self, function: str, outcome: CallOutcome) -> None:
        if outcome.status == "timeout":
            self._hung[function] = f"未运行：`{function}` 在前面的用例中超时，后续用例不再调用它。"
        elif outcome.status == "crashed":
            self._crashes[function] = self._crashes.get(function, 0) + 1
            if self._crashes[function] >= CRASHES_BEFORE_GIVING_UP:
                self._hung[function] = (f"未运行：`{function}` 已经 {CRASHES_BEFORE_GIVING_UP} 次让进程崩溃，"
                                        "后续用例不再调用它。")


def _not_overloaded(outcome: CallOutcome) -> CallOutcome:
    """A call that only a starved machine stopped (the sandbox's LOAD timeout, after its
    retries) is the grader's error, never a lower score."""
    refuse_overload(outcome.timeout_cause, outcome.exc_message or "")
    return outcome


# ---------------------------------------------------------------------------------------------
# Outcome -> Verdict
# ---------------------------------------------------------------------------------------------
def judge(reply: Reply, expect: Expectation, what: str | None = None, *, reveal: bool = True) -> Verdict:
    """Did the call do what the expectation demands? The message says why not, in Chinese
    (without the expected value unless `reveal`)."""
    what = what or reply.call.render()
    outcome = reply.outcome
    if outcome is None:
        return Verdict(False, f"`{what}`：{reply.skipped}")
    if isinstance(expect, Raises):
        return _judge_raises(outcome, expect, what)
    if outcome.status == "ok":
        return expect.check(outcome.value, what, reveal=reveal)
    return Verdict(False, failure_text(outcome, what))


def _judge_raises(outcome: CallOutcome, expect: Raises, what: str) -> Verdict:
    wanted = f"应该抛出 {expect.exc_type}（{expect.reason}）"
    if outcome.status == "raised":
        names = outcome.exc_mro or (outcome.exc_type,)
        if expect.exc_type in names:
            return Verdict(True)
        if outcome.exc_type == "NotImplementedError":
            return Verdict(False, f"`{what}` {wanted}，但函数还没有实现（仍然 raise NotImplementedError）。")
        return Verdict(False, f"`{what}` {wanted} — 实际抛出了 {_exception(outcome)}")
    if outcome.status == "ok":
        return Verdict(False, f"`{what}` {wanted} — 实际正常返回了{_value_summary(outcome.value)}")
    return Verdict(False, failure_text(outcome, what))


def failure_text(outcome: CallOutcome, what: str) -> str:
    """Chinese explanation of a call that did not return normally."""
    status = outcome.status
    if status == "raised":
        if outcome.exc_type == "NotImplementedError":
            return f"`{what}`：还没有实现（函数体仍然是 raise NotImplementedError）。"
        if outcome.exc_type in ("SystemExit", "KeyboardInterrupt"):
            return f"`{what}` 抛出了 {_exception(outcome)}——被评分的函数不能退出程序或模拟中断。"
        where = f"\n\n```\n{fenced_text(outcome.traceback.strip()[-1200:])}\n```" if outcome.traceback.strip() else ""
        return f"`{what}` 抛出了 {_exception(outcome)}{where}"
    if status == "timeout":
        if outcome.timeout_cause is TimeoutCause.DEADLINE:
            return f"`{what}` 被停止：这份作业的评分总时间已用完（前面的调用太慢或卡住了）。"
        if outcome.timeout_cause is TimeoutCause.BLOCKED:
            return f"`{what}` 超过了每次调用的时间限制：它在等待或休眠（sleep、读输入），而不是在计算。"
        return f"`{what}` 超过了每次调用的时间限制：死循环，或者实现太慢。"
    if status == "too_large":
        return (f"`{what}` 返回的结果太大（`{_cut(outcome.exc_message)}`），远远超过期望结果的大小，"
                "评分程序没有读取它。请返回和题目要求同样形状的结果。")
    if status == "crashed":
        detail = f"（`{_cut(outcome.exc_message)}`）" if outcome.exc_message else ""
        return (f"`{what}` 运行时进程异常终止{detail}：可能是段错误、内存超限、"
                "调用了 os._exit，或者输出太多。")
    return (f"`{what}` 的结果无法传回评分程序{('：`' + _cut(outcome.exc_message) + '`') if outcome.exc_message else ''}。"
            "请只返回数字、numpy 数组、list 或 dict 这样的普通数据。")


def import_failure_text(outcome: CallOutcome, module: str) -> str:
    """Why the student's module could not be loaded (every function item reports this)."""
    if outcome.status == "raised":
        kind = outcome.exc_type or "Exception"
        # Only the module itself missing means "not submitted": a missing `solutions.<assignment>`
        # (a student importing the reference) may also contain the module's name.
        if kind == "ModuleNotFoundError" and (outcome.exc_message or "").strip() == f"No module named '{module}'":
            return f"没有找到 `{module}.py`：请确认提交了这个文件，文件名没有改动。"
        if kind in ("SyntaxError", "IndentationError", "TabError"):
            return f"`{module}.py` 有语法错误，无法导入：{_exception(outcome)}"
        where = f"\n\n```\n{fenced_text(outcome.traceback.strip()[-1200:])}\n```" if outcome.traceback.strip() else ""
        return f"导入 `{module}.py` 时抛出了 {_exception(outcome)}{where}"
    if outcome.status == "timeout":
        return f"导入 `{module}.py` 超过了时间限制：模块顶层的代码（循环、计算）运行太久。"
    if outcome.status == "crashed":
        return f"导入 `{module}.py` 时进程异常终止（`{_cut(outcome.exc_message or '')}`）。"
    return f"导入 `{module}.py` 失败：`{_cut(outcome.exc_message or outcome.status)}`"


def _exception(outcome: CallOutcome) -> str:
    message = _cut(outcome.exc_message or "")
    kind = inline_text(outcome.exc_type or "", 200)
    return f"`{kind}: {message}`" if message else f"`{kind}`"


def _value_summary(value: object) -> str:
    text = describe_type(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = render_number(value)  # a 4000-bit int is described, not printed
    return f" {text}"


def _cut(text: str | None, limit: int = MESSAGE_CHARS) -> str:
    return inline_text(text or "", limit)


__all__ = ["Reply", "StudentCode", "judge", "failure_text", "import_failure_text", "reply_bound", "Returns", "Raises"]
