"""图里的中文：让 matplotlib 用一个装好的中文字体；一个都没有时图里用英文（不会出现方块或缺字警告）。

The course's plotting helper, shared like `console.py`: each assignment that plots lists it in
grading.toml `shared_modules`, so the student folder gets a copy and the grader's sandbox runs the
original. Student-facing, so the comments are in Chinese.
"""

from __future__ import annotations

from collections.abc import Callable

# 常见的中文字体：Windows、macOS、Linux 各几个。
CJK_FONTS = ("Microsoft YaHei", "SimHei", "DengXian",
             "PingFang SC", "Hiragino Sans GB", "Heiti SC", "STHeiti", "Songti SC",
             "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei",
             "Droid Sans Fallback")

# 字体文件名里常见的片段：matplotlib 的字体缓存比新装的字体旧时，用它们找到文件补进来。
CJK_FILE_HINTS = ("wqy", "cjk", "msyh", "simhei", "deng", "pingfang", "hiragino", "heiti", "songti", "sourcehan",
                  "notosanssc", "droidsansfallback")


def use_cjk_font(candidates=CJK_FONTS) -> bool:
    """让 matplotlib 用第一个装好的中文字体，返回 True；一个都没装时什么也不改，返回 False。"""
    from matplotlib import font_manager, rcParams

    manager = font_manager.fontManager

    def installed():
        names = {font.name for font in manager.ttflist}
        return [name for name in candidates if name in names]

    if not installed():  # 缓存可能是装字体之前建的：把文件名像中文字体的文件补进来
        for path in font_manager.findSystemFonts():
            if any(hint in path.lower().replace("-", "").replace("_", "") for hint in CJK_FILE_HINTS):
                try:
                    manager.addfont(path)
                except (OSError, RuntimeError, ValueError):  # 读不了的字体文件：跳过
                    pass
    found = installed()
    if not found:
        return False
    rcParams["font.family"] = "sans-serif"
    rcParams["font.sans-serif"] = found + [f for f in rcParams["font.sans-serif"] if f not in found]
    rcParams["axes.unicode_minus"] = False  # 有的中文字体没有 U+2212 减号
    return True


def chinese_labels() -> tuple[bool, Callable[[str, str], str]]:
    """(有没有中文字体, label)：label(中文, English) 在有中文字体时给中文，没有时给英文。"""
    cjk = use_cjk_font()

    def label(zh: str, en: str) -> str:
        return zh if cjk else en

    return cjk, label
