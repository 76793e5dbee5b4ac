"""
你的个人参数：本次作业每位同学的题目数字不同，由学号决定。

notebook 的第一个代码格子调用 variant_for(STUDENT_ID)，得到你的参数 VARIANT（一个字典），
下面各题都用它们。参数表 variants.json 只有参数，没有答案；评分时按提交者本人的学号取参数，
所以填别人的学号只会让你的答案对不上自己的题。

STUDENT_ID 留空时，依次取评分环境给出的学号（CS349E_STUDENT_ID）和 JupyterHub 的登录名（JUPYTERHUB_USER）；
评分时评分程序按提交者本人的学号给出参数（CS349E_VARIANT）。
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

ASSIGNMENT = "lec01_codesign"
TABLE = Path(__file__).resolve().with_name("variants.json")
ID_FROM_ENVIRONMENT = ("CS349E_STUDENT_ID", "JUPYTERHUB_USER")


class StudentIdError(ValueError):
    """学号没填、填错，或不在本次作业的名单里。"""


def student_id(typed) -> str:
    """填写的学号（去掉首尾空格）；留空时取环境给出的学号。"""
    sid = "" if typed is None else str(typed).strip()
    for name in ID_FROM_ENVIRONMENT:
        if sid:
            break
        sid = os.environ.get(name, "").strip()
    if not sid:
        raise StudentIdError("还没有填学号：在 notebook 第一个代码格子的 STUDENT_ID 引号里填上你的学号"
                             "（和提交时用的一致），再从头运行。")
    return sid


def id_hash(sid: str) -> str:
    return hashlib.sha256(f"{ASSIGNMENT}:{sid}".encode()).hexdigest()[:16]


def variant_for(typed) -> dict:
    """学号为 typed 的同学的参数。"""
    sid = student_id(typed)
    graded = os.environ.get("CS349E_STUDENT_ID", "").strip()
    if graded and sid == graded and os.environ.get("CS349E_VARIANT"):  # 评分时：评分程序给出的本人参数
        return dict(json.loads(os.environ["CS349E_VARIANT"]))
    try:
        table = json.loads(TABLE.read_text(encoding="utf-8"))["by_id_hash"]
    except (OSError, ValueError, KeyError, TypeError):
        raise StudentIdError(f"参数表 {TABLE.name} 缺失或被改坏了：从作业原件复制一份。") from None
    params = table.get(id_hash(sid))
    if params is None:
        raise StudentIdError(f"学号 {sid} 不在本次作业的名单里：请检查拼写，或联系助教。")
    return dict(params)
