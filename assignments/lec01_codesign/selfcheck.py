"""
自查：notebook 里的 check("<评分项>")，以及命令行的 python selfcheck.py（提交前跑一遍）。

【check 做什么】
    函数（check("函数名")）：重新导入你的 codesign.py，跑这个函数的公开例子，给一行结论。
    报告题（check("题号")）：看答案变量有没有定义、类型对不对（数 / 选项字母）、
        数值是否在很宽的合理范围里（帮你发现单位错误）。它**不会**告诉你答案对不对。
    文字题：由助教人工评分，check 不检查。
【python selfcheck.py】跑全部函数的公开例子，检查 handout.ipynb 是不是完好（合法的 JSON、评分格都在），
    并列出还没作答的题。它只读 notebook 文件，不运行它——先在 Jupyter 里保存。
    每人参数不同的作业：还检查第一个代码格子里的 STUDENT_ID 填了、在名单里，并显示你的参数（不显示答案）。
【python selfcheck.py --zip】先做上面的检查，再把要交的文件（codesign.py、handout.ipynb）打包成
    lec01_codesign_submission.zip，上传到课程网站或 Gradescope 就交这一个文件。

Grading modes (fixed when the notebook's first cell imports this module, so a later cell that edits
os.environ cannot change them):
    student    (default)                        the checks above; returns None.
    trusted    CS349E_TRUSTED_GRADING=1         the trusted grader executes the notebook only to read
                                                the answer variables; check does nothing, returns None.
    autograde  NBGRADER_EXECUTION=autograde     nbgrader's sandboxed kernel: check does nothing and
                                                returns None. The course's autograde pipeline writes
                                                the trusted grader's pinned score and explanation
                                                into every grade cell, whatever the kernel shows.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import numbers
import os
import sys
import tomllib
import zipfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # `python path/to/selfcheck.py` from another folder
    sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from public_checks import MODULE_FILE, StudentFileError, cases_of, load_student_module, run_case  # noqa: E402

NOTEBOOK = HERE / "handout.ipynb"
GRADING = HERE / "grading.toml"
TEXT_STUB = "（在这里用自己的话作答）"  # the released text answer cell (the build writes the same stub)
STUDENT_FILES = ('codesign.py', 'handout.ipynb')  # exactly what is handed in (grading.toml's student_files)
ZIP_NAME = "lec01_codesign_submission.zip"
FUNCTION, NUMBER, TEXT = "function", "number", "text"  # grading.toml's item kinds
VARIANTS = True  # per-student variants: the notebook's first code cell sets STUDENT_ID and VARIANT
STUDENT_ID_CELL = "student_id"  # that cell's id


def detect_mode(environ) -> str:
    if environ.get("NBGRADER_EXECUTION") == "autograde":
        return "autograde"
    if environ.get("CS349E_TRUSTED_GRADING") == "1":
        return "trusted"
    return "student"


_MODE = detect_mode(os.environ)


class skip_if_unfinished:
    """notebook 里演示格的保护（with skip_if_unfinished(): ...）。

    格子里调用了还没实现的函数（codesign.py 里仍是 raise NotImplementedError）时，只打印一行"尚未实现"，
    不抛出异常，Run All 继续往下运行；之后的格子要用这一格没算出来的结果而出错时，也只打印一行说明，
    而不是一个看不懂的 KeyError / NameError。前面的格子都算完了时，任何错误照常显示（那是要你去看的）。
    重新运行导入格（importlib.reload(codesign) 那一格）会清空记录。
    """

    unfinished: dict[str, None] = {}  # 因为"尚未实现"而没算完的函数（按出现顺序）

    def __enter__(self):
        return self

    def __exit__(self, etype, exc, tb):
        if etype is None or not issubclass(etype, Exception):
            return False
        if issubclass(etype, NotImplementedError):
            function = _unfinished_function(tb)
            skip_if_unfinished.unfinished[function] = None
            print(f"尚未实现：这一格用到的 {function} 还没实现（{MODULE_FILE} 里仍是 raise NotImplementedError），"
                  "这一格没有算完。实现以后重新运行导入格，再从这里往下运行。")
            return True
        if skip_if_unfinished.unfinished:
            names = "、".join(skip_if_unfinished.unfinished)
            print(f"尚未实现：这一格要用前面没算完的结果（{names} 还没实现），跳过"
                  f"（{etype.__name__}: {str(exc)[:80]}）。实现以后重新运行导入格，再从这里往下运行。")
            return True
        return False

    @classmethod
    def forget(cls) -> None:
        cls.unfinished.clear()


def _unfinished_function(tb) -> str:
    """raise NotImplementedError 所在的学生函数名（找不到时给文件名）。"""
    name = MODULE_FILE
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).name == MODULE_FILE:
            name = f"{Path(MODULE_FILE).stem}.{tb.tb_frame.f_code.co_name}"
        tb = tb.tb_next
    return name


def check(item_id):
    """检查一个评分项（函数名或题号），打印一行结论。"""
    if _MODE != "student":
        return None
    print(verdict(item_id, sys._getframe(1).f_globals))
    return None


# ---------------------------------------------------------------------------------------------
# 一个评分项的结论
# ---------------------------------------------------------------------------------------------
def load_items() -> dict[str, dict]:
    """grading.toml 里的评分项，按 id 索引。"""
    try:
        raw = tomllib.loads(GRADING.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StudentFileError("找不到 grading.toml：它应该和 selfcheck.py 在同一个文件夹里（从作业原件复制一份）。") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise StudentFileError(f"grading.toml 被改坏了（{err}）：从作业原件复制一份。") from None
    return {item["id"]: item for item in raw.get("items", [])}


def verdict(item_id, namespace: dict) -> str:
    """一行中文结论。namespace 是 notebook 的变量（答案变量在这里找）。"""
    try:
        items = load_items()
    except StudentFileError as err:
        return f"✗ {err}"
    item = items.get(item_id) if isinstance(item_id, str) else None
    if item is None:
        return f"✗ 未知的评分项 {item_id!r}。本作业的评分项：{', '.join(items)}"
    kind = item["kind"]
    if kind == FUNCTION:
        return function_verdict(item_id)
    if kind == TEXT:
        return f"· {item_id} 是文字题，由助教人工评分，check 不检查它；直接在题目下面的 Markdown 格里作答。"
    if VARIANTS and "VARIANT" not in namespace:
        return f"✗ {item_id}：还没有你的参数 VARIANT——先在第一个代码格子里填学号（STUDENT_ID）并运行它，再从上往下运行。"
    if item_id not in namespace:
        return (f"✗ {item_id}：还没有作答——在上面的答案格里给变量 {item_id} 赋值，运行那个格子，再运行本格。")
    value = namespace[item_id]
    problem = number_problem(value, item) if kind == NUMBER else choice_problem(value, item)
    if problem:
        return f"✗ {item_id}：{problem}"
    note = percent_note(value, item) if kind == NUMBER else ""
    return f"✓ {item_id} = {value!r}：格式正确。这里不判断对错，评分时才知道。{note}"


def function_verdict(function: str) -> str:
    try:
        module = load_student_module()
    except StudentFileError as err:
        return f"✗ {function}：{err}"
    outcomes = [run_case(module, case) for case in cases_of(function)]
    passed = sum(o.ok for o in outcomes)
    if any(o.status == "not_implemented" for o in outcomes):
        return f"… {function}：未实现（{MODULE_FILE} 里还是 raise NotImplementedError）"
    if passed == len(outcomes):
        return f"✓ {function}：公开检查 {passed}/{len(outcomes)} 通过（评分时还有更多隐藏测试）。"
    first = next(o for o in outcomes if not o.ok)
    return f"✗ {function}：公开检查 {passed}/{len(outcomes)} 通过。第一个不通过的：{first.message}"


def number_problem(value, item: dict) -> str | None:
    unit = item.get("unit", "")
    if isinstance(value, (bool, np.bool_)):
        return f"是布尔值 {value}，应该是一个数"
    if isinstance(value, str):
        return f"是字符串 {value!r}，应该是一个数（不要加引号或单位）"
    if not isinstance(value, numbers.Real):
        return f"是 {type(value).__name__}，应该是一个数（int 或 float），不是数组或其他对象"
    if not math.isfinite(float(value)):
        return f"是 {value}，应该是一个有限的数"
    low, high = item.get("plausible", (-math.inf, math.inf))
    if not low <= float(value) <= high:
        return (f"{float(value):g} 不在这题很宽的合理范围 [{low:g}, {high:g}]（单位：{unit}）里——"
                "检查一下单位换算（倍数、百分数、10^9、10^12）")
    return None


def percent_note(value, item: dict) -> str:
    # the same words for every value: a note only for answers below 1 would also greet a right 0.73 %
    # (and tell its author to multiply by 100)
    if item.get("unit") == "%":
        return "（提醒：这题的单位是 %：12% 写成 12，不写 0.12。）"
    return ""


def choice_problem(value, item: dict) -> str | None:
    choices = item.get("choices", [])
    listed = "、".join(repr(c) for c in choices)
    if not isinstance(value, str):
        return f"是 {type(value).__name__} {value!r}，应该是一个字符串，取 {listed} 之一"
    if value.strip().upper() not in choices:  # 和评分一样：大小写、首尾空格都不计较
        return f"{value!r} 不是选项之一，应该取 {listed} 之一"
    return None


# ---------------------------------------------------------------------------------------------
# notebook 文件
# ---------------------------------------------------------------------------------------------
def read_notebook(path: Path = NOTEBOOK) -> dict:
    """读入 notebook 的 JSON；读不了时抛出带中文说明的 StudentFileError。"""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StudentFileError(f"找不到 {path.name}：它应该和 selfcheck.py 在同一个文件夹里。") from None
    except UnicodeDecodeError:
        raise StudentFileError(f"{path.name} 不是 UTF-8 文本，可能被别的程序改坏了。") from None
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as err:
        raise StudentFileError(
            f"{path.name} 不是合法的 JSON（第 {err.lineno} 行第 {err.colno} 列：{err.msg}），多半是在文本编辑器里被改坏了。"
            f"试试用 Jupyter 打开；打不开的话，复制一份新的 {path.name}，把答案抄回去。") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise StudentFileError(f"{path.name} 不是 Jupyter notebook（没有 cells 列表）。")
    return nb


def notebook_problems(path: Path = NOTEBOOK) -> list[str]:
    """notebook 的结构问题（读不了、评分格缺失或重复）；空列表表示完好。"""
    try:
        nb, items = read_notebook(path), load_items()
    except StudentFileError as err:
        return [str(err)]
    counts = Counter(_grade_id(cell) for cell in nb["cells"])
    problems = []
    for item_id in items:
        if counts[item_id] == 0:
            problems.append(f"评分格 {item_id} 不见了（被删掉了？）：从作业原件里把那个格子复制回来。")
        elif counts[item_id] > 1:
            problems.append(f"评分格 {item_id} 出现了 {counts[item_id]} 次（被复制了？）：只保留一个。")
    return problems


def unanswered(path: Path = NOTEBOOK) -> list[str]:
    """还没作答的报告题（只看文件，不运行）：答案格没有给变量赋值，或文字题还是空的。"""
    nb, items = read_notebook(path), load_items()
    cells = {_grade_id(cell): cell for cell in nb["cells"]}
    missing = []
    for item_id, item in items.items():
        if item["kind"] == FUNCTION:
            continue
        if item["kind"] == TEXT:
            text = _source(cells.get(item_id, {})).strip()
            if not text or text == TEXT_STUB:
                missing.append(item_id)
        elif item_id not in _assigned_names(_source(cells.get(f"{item_id}_answer", {}))):
            missing.append(item_id)
    return missing


def typed_student_id(path: Path = NOTEBOOK, variable: str = "STUDENT_ID") -> str:
    """第一个代码格子里 STUDENT_ID（或 variable，如 VARIANT_TOKEN）的值（只读文件，不运行）；没找到或不是字面量时为空。"""
    nb = read_notebook(path)
    for cell in nb["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        if cell.get("id") != STUDENT_ID_CELL and "STUDENT_ID" not in _assigned_names(_source(cell)):
            continue
        try:
            tree = ast.parse(_source(cell))
        except SyntaxError:
            return ""
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == variable for t in node.targets):
                try:
                    return str(ast.literal_eval(node.value)).strip()
                except ValueError:
                    return ""
        return ""
    return ""


def variant_verdict(path: Path = NOTEBOOK) -> str:
    """学号和参数的一行结论（只有参数，没有答案）。"""
    from variant import StudentIdError, variant_for

    try:
        typed = typed_student_id(path)
        params = variant_for(typed, typed_student_id(path, "VARIANT_TOKEN"))
    except (StudentIdError, StudentFileError) as err:
        return f"✗ {err}"
    who = f"学号 {typed}" if typed else "学号（留空，取自登录名）"
    return f"✓ {who}：你的参数（{len(params)} 个）\n" + parameter_table(params)


def parameter_table(params: dict, width: int = 80, indent: int = 4) -> str:
    """参数排成几列的小表（按名字排序、竖着读），每行不超过 width 个字符。"""
    cells = [f"{name} = {value!r}" for name, value in sorted(params.items())]
    if not cells:
        return ""
    column = max(len(cell) for cell in cells) + 2
    columns = max(1, (width - indent) // column)
    rows = -(-len(cells) // columns)
    lines = []
    for row in range(rows):
        line = "".join(cells[i].ljust(column) for i in range(row, len(cells), rows))
        lines.append(" " * indent + line.rstrip())
    return "\n".join(lines)


def _grade_id(cell) -> str | None:
    meta = cell.get("metadata", {}) if isinstance(cell, dict) else {}
    nbgrader = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
    return grade_id if isinstance(grade_id, str) else None  # a hand-edited id may be anything


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _assigned_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


# ---------------------------------------------------------------------------------------------
# 命令行：python selfcheck.py [--zip]
# ---------------------------------------------------------------------------------------------
def functions() -> list[str]:
    """grading.toml 里的函数题，按登记顺序。"""
    try:
        return [item_id for item_id, item in load_items().items() if item.get("kind") == FUNCTION]
    except StudentFileError:
        return []


def report() -> bool:
    """打印全部检查的结论；全部通过时返回 True。"""
    names = functions()
    lines = [function_verdict(function) for function in names]
    if names:
        print(f"{MODULE_FILE}：公开检查")
        print("\n".join(f"  {line}" for line in lines))
    print(f"\n{NOTEBOOK.name}：")
    problems = notebook_problems()
    if VARIANTS and not problems:
        line = variant_verdict()
        if line.startswith("✓"):
            print(f"  {line}")
        else:
            problems.append(line.removeprefix("✗ "))
    for problem in problems:
        print(f"  ✗ {problem}")
    if not problems:
        missing = unanswered()
        print("  ✓ 文件完好，评分格都在。")
        print(f"  · 还没作答的题：{', '.join(missing)}" if missing else "  ✓ 每道报告题都作答了（对错要等评分）。")
    print("\n这里只检查格式和公开例子；答案对不对、隐藏测试过不过，评分时才知道。")
    return not problems and all(line.startswith("✓") for line in lines)


def write_zip(folder: Path = HERE) -> Path:
    """把要交的文件（不多不少）打包成 folder/ZIP_NAME；缺文件时抛出 StudentFileError，不写半个包。"""
    missing = [name for name in STUDENT_FILES if not (folder / name).is_file()]
    if missing:
        raise StudentFileError(f"找不到 {', '.join(missing)}：要交的文件必须和 selfcheck.py 在同一个文件夹里，"
                               "文件名不要改动。")
    target = folder / ZIP_NAME
    partial = target.with_name(target.name + ".part")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in STUDENT_FILES:
            archive.write(folder / name, arcname=name)
    partial.replace(target)  # 要么是完整的新包，要么还是旧包
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python selfcheck.py", description="提交前的自查；--zip 同时打包要交的文件。")
    parser.add_argument("--zip", action="store_true", help=f"检查之后把 {'、'.join(STUDENT_FILES)} 打包成 {ZIP_NAME}")
    args = parser.parse_args(argv)
    passed = report()
    if not args.zip:
        return 0 if passed else 1
    try:
        target = write_zip()
    except StudentFileError as err:
        print(f"\n✗ 没有打包：{err}")
        return 1
    print(f"\n已打包：{target.name}（{'、'.join(STUDENT_FILES)}）。上传到课程网站或 Gradescope 时交这一个文件。")
    if not passed:
        print("  上面还有没通过的检查：可以先交，改好以后重新运行 python selfcheck.py --zip 再交一次。")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
