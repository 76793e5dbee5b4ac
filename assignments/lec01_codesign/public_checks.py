"""
公开检查的运行器：pytest（test_codesign.py）和 check()（selfcheck.py）共用这一份。
例子本身写在 public_cases.py 里；这里负责导入 codesign.py、调用函数、比较结果、给出中文说明。

【它们是什么】每个例子写明了输入、期望值和理由（why），只覆盖 docstring 里说到的典型情况。
【它们不是什么】评分时的隐藏测试要多得多（随机数据、更多边界），公开例子全过不等于满分。
"""

from __future__ import annotations

import importlib.util
import numbers
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
STUDENT_MODULE = "codesign"
MODULE_FILE = "codesign.py"
FLOAT_RTOL = 1e-9  # 单个浮点数：不同但正确的算式（先乘后除等）只差最后几位
ARRAY_SHOWN = 8  # 数组不超过这么多个元素时完整显示


class StudentFileError(Exception):
    """codesign.py 无法导入（缺失、语法错误、顶层代码出错）；消息是给学生看的中文。"""


def load_student_module(folder: Path = HERE):
    """每次都重新从磁盘导入 codesign.py（不用 sys.modules 里的旧版本），出错时给出中文说明。"""
    path = folder / MODULE_FILE
    if not path.is_file():
        raise StudentFileError(f"找不到 {path.name}：它应该和 public_checks.py 在同一个文件夹里。")
    spec = importlib.util.spec_from_file_location(STUDENT_MODULE, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as err:
        line = (err.text or "").strip()
        raise StudentFileError(f"{MODULE_FILE} 第 {err.lineno} 行有语法错误（{err.msg}）：\n    {line}\n"
                               "改好之后再运行。") from None
    except (Exception, SystemExit) as err:
        raise StudentFileError(f"导入 {MODULE_FILE} 时出错：{type(err).__name__}: {err}\n"
                               "函数外面（文件顶层）的代码在导入时就会运行，检查一下那里。") from None
    return module


# ---------------------------------------------------------------------------------------------
# 例子（public_cases.py 用它写出每个例子）
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    function: str
    name: str  # 短名字，pytest 里显示为 函数-名字
    args: tuple
    why: str  # 这个例子检查什么、期望值是怎么来的
    expected: Any = None
    raises: type[BaseException] | None = None  # 期望抛出的异常；None 表示期望返回 expected
    shown: str = ""  # 参数太长时，消息里用这段文字代替
    rtol: float = 0.0  # 数组比较的相对容差；0 表示逐位相等
    no_warnings: bool = False  # 为 True 时，产生 RuntimeWarning 也算不通过

    @property
    def id(self) -> str:
        return f"{self.function}-{self.name}"

    def call_text(self) -> str:
        return f"{self.function}({self.shown or ', '.join(show(a) for a in self.args)})"




# ---------------------------------------------------------------------------------------------
# 运行和比较
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    case: Case
    status: str  # "passed" | "failed" | "not_implemented"
    message: str = ""  # 不通过时的中文说明

    @property
    def ok(self) -> bool:
        return self.status == "passed"


def cases_of(function: str) -> tuple[Case, ...]:
    return tuple(case for case in public_cases().CASES if case.function == function)


def public_cases():
    """public_cases.py（这份作业的例子）；导入时才读，它自己也要从这里导入 Case。"""
    import public_cases as module

    return module


def run_case(module, case: Case) -> Outcome:
    """调用学生的函数，判断结果；学生代码里的任何异常都变成一条中文说明，不会冒出来。"""
    function = getattr(module, case.function, None)
    if not callable(function):
        return Outcome(case, "failed", f"{MODULE_FILE} 里找不到函数 {case.function}（被删掉或改名了？）")
    call = case.call_text()
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in case.args)  # 学生改了输入也不影响别的例子
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = function(*args)
        except NotImplementedError:
            return Outcome(case, "not_implemented", f"{case.function} 未实现（或者它调用的函数还没实现）")
        except Exception as err:  # noqa: BLE001 - 学生代码的任何错误都要变成反馈
            if case.raises is not None and isinstance(err, case.raises):
                return Outcome(case, "passed")
            want = (f"期望抛出 {case.raises.__name__}" if case.raises is not None
                    else f"期望返回 {show(case.expected)}")
            return Outcome(case, "failed", f"{call} 抛出了 {type(err).__name__}: {err}；{want}。{case.why}")
    if case.raises is not None:
        return Outcome(case, "failed", f"{call} 应该抛出 {case.raises.__name__}，却返回了 {show(result)}。{case.why}")
    problem = compare(result, case.expected, case.rtol)
    if problem:
        return Outcome(case, "failed", f"{call} {problem}。{case.why}")
    runtime_warnings = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    if case.no_warnings and runtime_warnings:
        return Outcome(case, "failed", f"{call} 的结果对，但产生了警告 RuntimeWarning: {runtime_warnings[0].message}"
                                       "（评分时警告可能算错误；用 np.where 等办法避开除以 0）。")
    return Outcome(case, "passed")


def compare(result: Any, expected: Any, rtol: float = 0.0) -> str | None:
    """None 表示一致；否则是"返回了什么、期望什么"的中文说明。"""
    if isinstance(expected, dict):
        return _compare_dict(result, expected)
    if isinstance(expected, np.ndarray):
        return _compare_array(result, expected, rtol)
    if isinstance(expected, int):
        if isinstance(result, bool) or not isinstance(result, (int, np.integer)):
            return f"返回了 {show(result)}（{type(result).__name__}），期望 int {expected}"
        return None if result == expected else f"返回 {show(result)}，期望 {expected}"
    return _compare_number(result, expected, "")


def _compare_number(result: Any, expected: float, where: str) -> str | None:
    if isinstance(result, (bool, np.bool_)) or not isinstance(result, numbers.Real):
        return f"{where}返回了 {show(result)}（{type(result).__name__}），期望一个数 {show(expected)}"
    if np.isclose(float(result), expected, rtol=FLOAT_RTOL, atol=0.0):
        return None
    return f"{where}返回 {show(result)}，期望 {show(expected)}"


def _compare_dict(result: Any, expected: dict) -> str | None:
    if not isinstance(result, dict):
        return f"返回了 {type(result).__name__}，期望一个 dict，键为 {sorted(expected)}"
    missing, extra = sorted(set(expected) - set(result)), sorted(set(result) - set(expected))
    if missing or extra:
        return f"返回的 dict 键不对：缺少 {missing or '无'}，多了 {extra or '无'}"
    for key, want in expected.items():
        got = result[key]
        if want is None:
            if got is not None:
                return f"的 [{key!r}] 返回 {show(got)}，期望 None"
            continue
        problem = _compare_number(got, want, f"的 [{key!r}] ")
        if problem:
            return problem
    return None


def _compare_array(result: Any, expected: np.ndarray, rtol: float) -> str | None:
    try:
        raw = np.asarray(result)
    except Exception:  # noqa: BLE001
        return f"返回了 {type(result).__name__}，期望一个数组"
    if not np.issubdtype(raw.dtype, np.floating):
        return f"返回了 dtype 为 {raw.dtype} 的 {type(result).__name__}，期望浮点数组（float64），值为 {show(expected)}"
    got = raw.astype(np.float64)
    if got.shape != expected.shape:
        return f"返回的形状是 {got.shape}，期望 {expected.shape}（和输入同形状）"
    close = np.isclose(got, expected, rtol=rtol, atol=0.0) if rtol else got == expected
    if close.all():
        return None
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0])
    where = first[0] if len(first) == 1 else list(first)
    detail = f"第一处在下标 {where}：返回 {show(got[first])}，期望 {show(expected[first])}"
    if expected.size <= ARRAY_SHOWN:
        return f"返回 {show(got)}，期望 {show(expected)}（{len(bad)}/{expected.size} 个元素不一致，{detail}）"
    return f"有 {len(bad)}/{expected.size} 个元素不一致，{detail}"


def show(value: Any) -> str:
    """消息里显示一个值：public_cases.DISPLAY 里登记的类型用它给的写法，小数组完整显示，浮点数显示到能还原的位数。"""
    display: dict[type, Callable[[Any], str]] = getattr(public_cases(), "DISPLAY", {})
    for kind, shown in display.items():
        if isinstance(value, kind):
            return shown(value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return show(value.item())
        if value.size > ARRAY_SHOWN:
            return f"<{value.shape} 数组>"
        return repr(value.tolist())
    if isinstance(value, (float, np.floating)) and not isinstance(value, bool):
        return repr(float(value))
    if isinstance(value, np.integer):
        return str(int(value))
    return repr(value)
