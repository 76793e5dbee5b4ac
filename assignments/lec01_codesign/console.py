# 自动生成：这是课程仓库根目录 console.py 的副本（python -m autograder build 生成），请勿修改——评分时它会被换回原样。
"""Printing for the lecture scripts: headers, aligned tables, numbered observations, SI numbers.

Chinese characters take two terminal columns; `rich` measures them that way, so tables built
here line up whatever mix of Chinese and ASCII they hold. Output adapts to where it goes:

- a terminal: rich output fitted to the terminal width (cells wrap inside their column);
- a pipe or file: plain text at the table's natural width and one line per observation, so
  logs and `grep` see every number whole;
- a Jupyter notebook: real HTML (a browser draws CJK glyphs at no fixed multiple of a Latin
  column, so box-drawn text tables would not line up there), plus the plain text for tools
  that only read text/plain.

Tables use ASCII rules only: box-drawing characters are "ambiguous width" and take two
columns in many CJK terminals.
"""

from __future__ import annotations

import html
import io
import math
import re

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

# rich's SIMPLE box with '-' instead of '─': a header rule and nothing else.
_ASCII_RULE = box.Box(
    "    \n"
    "    \n"
    " -  \n"
    "    \n"
    "    \n"
    " -  \n"
    "    \n"
    "    \n",
    ascii=True,
)
_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""),
             (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"))
_TOKEN = re.compile(r"[!-~]+|\s+|.")  # an ASCII word, a run of spaces, or any other single character
_NO_LINE_START = set("，。、；：！？）》」』】’”…—–×")
_NATURAL_WIDTH = 10_000  # wide enough that rich never wraps a table of this course


# --- number formatting ---------------------------------------------------------------------
def fmt_num(x) -> str:
    """SI-prefixed number with 4 significant digits and a trailing unit slot.

    fmt_num(989.4e12) == "989.4 T", fmt_num(15e15) == "15 P", fmt_num(591) == "591 ";
    compose units directly after it: f"{fmt_num(peak)}FLOP/s" -> "989.4 TFLOP/s".
    """
    x = float(x)  # an Unpublished figure raises MissingFigureError here
    if not math.isfinite(x) or x == 0:
        return f"{x:g} "
    for i, (scale, prefix) in enumerate(_PREFIXES):
        if abs(x) >= scale or i == len(_PREFIXES) - 1:
            mantissa = f"{x / scale:.4g}"
            if abs(float(mantissa)) >= 1000 and i > 0:  # 999.96 T rounds to "1000": say 1 P
                scale, prefix = _PREFIXES[i - 1]
                mantissa = f"{x / scale:.4g}"
            return f"{mantissa} {prefix}"
    raise AssertionError("unreachable")


def fmt_bytes(x) -> str:
    """Decimal (SI) bytes: fmt_bytes(168.75e9) == "168.8 GB", fmt_bytes(80e9) == "80 GB"."""
    return f"{fmt_num(x)}B"


# --- where the output goes -------------------------------------------------------------------
def _terminal() -> Console | None:
    """A rich console for an interactive terminal or a notebook; None for a pipe or file."""
    console = Console(highlight=False, markup=False, emoji=False)  # text is printed as given
    return console if console.is_terminal or console.is_jupyter else None


def _plain(renderable, width: int = _NATURAL_WIDTH) -> str:
    """Render without colour at up to `width` columns."""
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, force_terminal=False, force_jupyter=False,
            highlight=False, markup=False, emoji=False).print(renderable)
    return buf.getvalue().rstrip("\n")


def _show_html(markup: str, plain: str) -> None:
    from IPython.display import display

    display({"text/html": markup, "text/plain": plain}, raw=True)


# --- the three printers ---------------------------------------------------------------------
def print_header(title: str) -> None:
    """A blank line, the title, and a rule as wide as the title (in display columns)."""
    plain = f"\n{title}\n{'=' * cell_len(title)}"
    console = _terminal()
    if console is None:
        print(plain, flush=True)
    elif console.is_jupyter:
        _show_html(f"<h4>{html.escape(title)}</h4>", plain)
    else:
        console.print()
        console.print(Text(title, style="bold"))
        console.print("=" * min(cell_len(title), console.width))


def print_table(headers, rows) -> None:
    """A table whose columns line up with Chinese text; numeric-looking columns right-aligned."""
    headers = [str(h) for h in headers]
    rows = [[str(cell) for cell in row] for row in rows]
    for i, row in enumerate(rows):
        if len(row) != len(headers):
            raise ValueError(f"print_table: row {i} has {len(row)} cells, expected {len(headers)}: {row}")
    table = _rich_table(headers, rows)
    console = _terminal()
    if console is None:
        print(_plain(table), flush=True)
    elif console.is_jupyter:
        _show_html(_html_table(headers, rows), _plain(table))
    else:
        console.print(table)


def print_observations(observations) -> None:
    """Numbered paragraphs under a heading; they wrap with a hanging indent in a terminal."""
    observations = [str(o) for o in observations]
    plain = "\n".join(["\n观察："] + [f"  {i}. {o}" for i, o in enumerate(observations, 1)])
    console = _terminal()
    if console is None:
        print(plain, flush=True)
    elif console.is_jupyter:
        items = "".join(f"<li>{html.escape(o)}</li>" for o in observations)
        _show_html(f"<p><b>观察：</b></p><ol>{items}</ol>", plain)
    else:
        console.print()
        console.print(Text("观察：", style="bold"))
        for i, o in enumerate(observations, 1):
            bullet = f"  {i}. "
            indent = " " * len(bullet)
            lines = wrap_cells(o, max(console.width - len(bullet), 20))
            for j, line in enumerate(lines):
                console.print((bullet if j == 0 else indent) + line, soft_wrap=True)


def wrap_cells(text: str, width: int) -> list[str]:
    """Greedy wrap to `width` display columns; Chinese may break between any two characters.

    ASCII words stay whole unless longer than a line, and closing punctuation never starts a
    line (it hangs past the margin instead), as in Chinese typesetting.
    """
    lines, line = [], ""
    tokens = _TOKEN.findall(text)
    tokens = [t[i:i + width] for t in tokens for i in range(0, len(t), width)] if width > 0 else tokens
    for token in tokens:
        if token.isspace():
            line += " " if line else ""
            continue
        if not line.strip() or token in _NO_LINE_START or cell_len(line + token) <= width:
            line += token
        else:
            lines.append(line.rstrip())
            line = token
    if line.strip():
        lines.append(line.rstrip())
    return lines


# --- table building ---------------------------------------------------------------------------
def _looks_numeric(cell: str) -> bool:
    return cell == "-" or cell[:1].isdigit() or (cell[:1] in "+-≈" and cell[1:2].isdigit())


def _numeric_columns(headers: list[str], rows: list[list[str]]) -> list[bool]:
    return [bool(rows) and all(_looks_numeric(row[col]) for row in rows) for col in range(len(headers))]


def _rich_table(headers: list[str], rows: list[list[str]]) -> Table:
    table = Table(box=_ASCII_RULE, header_style="bold", show_edge=False, pad_edge=False)
    for header, numeric in zip(headers, _numeric_columns(headers, rows)):
        table.add_column(Text(header), justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))  # Text: '[...]' in a cell is not markup
    return table


def _html_table(headers: list[str], rows: list[list[str]]) -> str:
    aligns = ["right" if numeric else "left" for numeric in _numeric_columns(headers, rows)]

    def cells(tag: str, row: list[str]) -> str:
        return "".join(f'<{tag} style="text-align:{a}">{html.escape(c)}</{tag}>' for a, c in zip(aligns, row))

    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    return f"<table><thead><tr>{cells('th', headers)}</tr></thead><tbody>{body}</tbody></table>"


if __name__ == "__main__":  # a quick look at the three printers
    print_header("示例：console 的输出")
    print_table(["芯片", "算力", "说明"], [["H100", f"{fmt_num(989.4e12)}FLOP/s", "基准"],
                                         ["B300", f"{fmt_num(15e15)}FLOP/s", "NVFP4 稠密"]])
    print_observations(["表格按显示宽度对齐：一个汉字占两列。"])
