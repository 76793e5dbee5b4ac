"""
你的个人参数：本次作业每位同学的题目数字不同，由学号决定。

notebook 的第一个代码格子调用 variant_for(STUDENT_ID, VARIANT_TOKEN)，得到你的参数 VARIANT（一个字典），
下面各题都用它们。参数表 variants.json 里有全班每个人的参数（只有参数，没有答案、没有学号）：
每一条用"学号 + 个人口令"算出的编号存放，口令由助教单独发给你（JupyterHub 上可能已经替你填好）。
所以：
- 你能算出的：你自己的参数（学号 + 你的口令）。
- 你算不出的：同学的参数——只知道同学的学号不够，还要他的口令；口令由课程的密钥算出，这个文件夹里没有。
- 评分时按提交者本人的学号取参数（CS349E_VARIANT），照抄同学的数字对不上你自己的题。

STUDENT_ID 留空时，依次取评分环境给出的学号（CS349E_STUDENT_ID）和 JupyterHub 的登录名（JUPYTERHUB_USER）；
VARIANT_TOKEN 留空时取环境变量 CS349E_VARIANT_TOKEN。
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from pathlib import Path

ASSIGNMENT = "lec01_codesign"
TABLE = Path(__file__).resolve().with_name("variants.json")
ID_FROM_ENVIRONMENT = ("CS349E_STUDENT_ID", "JUPYTERHUB_USER")
TOKEN_FROM_ENVIRONMENT = "CS349E_VARIANT_TOKEN"


class StudentIdError(ValueError):
    """学号或口令没填、填错，或不在本次作业的名单里。"""


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


def token(typed) -> str:
    """填写的个人口令（大小写、短横线、空格都不要紧）；留空时取环境变量。"""
    text = re.sub(r"[^A-Z2-7]", "", str(typed or os.environ.get(TOKEN_FROM_ENVIRONMENT, "")).upper())
    if not text:
        raise StudentIdError("还没有填个人口令：在 notebook 第一个代码格子的 VARIANT_TOKEN 引号里填上助教发给你的口令"
                             "（形如 ABCD-EFGH-JKLM-NPQR），再从头运行。没收到口令请联系助教。")
    return text


def table_key(sid: str, typed_token) -> str:
    """参数表里你那一条的编号：用你的口令对学号做 HMAC（没有口令算不出来）。"""
    return hmac.new(token(typed_token).encode(), f"{ASSIGNMENT}:{sid}".encode(), hashlib.sha256).hexdigest()[:24]


def variant_for(typed, typed_token=None) -> dict:
    """学号为 typed、口令为 typed_token 的同学的参数。"""
    sid = student_id(typed)
    graded = os.environ.get("CS349E_STUDENT_ID", "").strip()
    if graded and sid == graded and os.environ.get("CS349E_VARIANT"):  # 评分时：评分程序给出的本人参数
        return dict(json.loads(os.environ["CS349E_VARIANT"]))
    try:
        table = json.loads(TABLE.read_text(encoding="utf-8"))["by_key"]
    except (OSError, ValueError, KeyError, TypeError):
        raise StudentIdError(f"参数表 {TABLE.name} 缺失或被改坏了：从作业原件复制一份。") from None
    params = table.get(table_key(sid, typed_token))
    if params is None:
        raise StudentIdError(f"学号 {sid} 和这个口令对不上参数表里的任何一条：请检查学号和口令的拼写"
                             "（口令是助教发给你本人的），或联系助教。")
    return dict(params)
