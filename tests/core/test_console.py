"""console: tables that line up with Chinese text, wrapped observations, SI number formatting."""

import io
import re

import pytest
from hypothesis import given, strategies as st
from rich.cells import cell_len
from rich.console import Console

import console
from console import fmt_bytes, fmt_num, print_header, print_observations, print_table, wrap_cells
from hw_specs import RUBIN, MissingFigureError

HEADERS = ["芯片", "最低精度稠密算力", "算力倍数", "说明"]
ROWS = [
    ["H100", "1.979 PFLOP/s (fp8)", "1.0×", "基准"],
    ["B300（Blackwell Ultra）", "15 PFLOP/s (nvfp4)", "7.6×", "NVFP4 稠密算力，博客写 7.5 倍"],
    ["Rubin", "50 PFLOP/s (nvfp4)", "25.3×", "-"],
]
OBSERVATIONS = [
    "按厂商口径（各代最低精度），Blackwell Ultra 的算力是 H100 的 7.6 倍；但同为 FP8 只有 2.5 倍——"
    "一半以上的'提升'来自换了更低的数值格式。读厂商数字时，先确认比较的是不是同一种精度。",
    "带宽只涨了 2.4 倍，容量涨了 3.6 倍，NVLink 涨了 2 倍：算力增长远快于带宽和互连。",
]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _cell_starts(line: str, row: list[str]) -> list[int]:
    """Display column where each cell's text begins in a printed line."""
    starts, pos = [], 0
    for cell in row:
        pos = line.index(cell, pos)
        starts.append(cell_len(line[:pos]))
        pos += len(cell)
    return starts


def _check_alignment(lines: list[str]) -> None:
    widths = {cell_len(line) for line in lines}
    assert len(widths) == 1, f"rows differ in display width {widths}:\n" + "\n".join(lines)


# --- plain output (a pipe, a file, pytest's capture) ---------------------------------------
def test_table_rows_have_equal_display_width_with_chinese_text(capsys):
    print_table(HEADERS, ROWS)
    lines = _table_lines(capsys.readouterr().out)
    assert len(lines) == 2 + len(ROWS)  # header, rule, rows
    _check_alignment(lines)


def test_left_aligned_columns_start_at_the_same_display_column(capsys):
    print_table(HEADERS, ROWS)
    lines = _table_lines(capsys.readouterr().out)
    first, _, _, last = zip(*(_cell_starts(line, row) for line, row in zip(lines[2:], ROWS)))
    assert len(set(first)) == len(set(last)) == 1
    assert len({cell_len(line[:line.index(row[2])]) + cell_len(row[2]) for line, row in zip(lines[2:], ROWS)}) == 1, \
        "the numeric column is right-aligned: its cells end at one column"


def test_cells_are_printed_verbatim_not_as_markup(capsys):
    print_table(["a", "b"], [["[bold]x[/bold]", ":smile: [0]"]])
    out = capsys.readouterr().out
    assert "[bold]x[/bold]" in out and ":smile: [0]" in out


def test_ragged_row_is_a_value_error():
    with pytest.raises(ValueError, match=r"row 1 has 2 cells, expected 4"):
        print_table(HEADERS, [ROWS[0], ["H100", "x"]])


def test_observations_are_numbered_one_per_line_when_piped(capsys):
    print_observations(OBSERVATIONS)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "观察："
    assert lines[1:] == [f"  {i}. {text}" for i, text in enumerate(OBSERVATIONS, 1)]


def test_header_rule_is_as_wide_as_the_title(capsys):
    title = "演示 1：四代 NVIDIA 数据中心 GPU 的关键规格"
    print_header(title)
    lines = capsys.readouterr().out.strip("\n").splitlines()
    assert lines == [title, "=" * cell_len(title)]


# --- an interactive terminal --------------------------------------------------------------
@pytest.fixture
def narrow_terminal(monkeypatch):
    """Route output to a 60-column terminal; yields a function returning what was printed."""
    buf = io.StringIO()
    term = Console(file=buf, width=60, force_terminal=True, force_jupyter=False, color_system="standard",
                   highlight=False, markup=False, emoji=False)
    monkeypatch.setattr(console, "_terminal", lambda: term)
    return lambda: ANSI.sub("", buf.getvalue())


def test_table_fits_a_narrow_terminal_and_stays_aligned(narrow_terminal):
    print_table(HEADERS, ROWS)
    lines = _table_lines(narrow_terminal())
    _check_alignment(lines)
    assert max(cell_len(line) for line in lines) <= 60
    assert "".join(lines).count("基准") == 1  # cells wrap inside their column, nothing is cut


def test_observations_wrap_with_a_hanging_indent(narrow_terminal):
    print_observations(OBSERVATIONS)
    lines = narrow_terminal().strip("\n").splitlines()
    assert lines[0] == "观察："
    starts = [i for i, line in enumerate(lines) if re.match(r"  \d+\. ", line)]
    assert [lines[i][:5] for i in starts] == ["  1. ", "  2. "]
    assert all(line.startswith(" " * 5) for i, line in enumerate(lines[1:], 1) if i not in starts)
    assert all(cell_len(line) <= 60 + 2 for line in lines)  # closing punctuation may hang past the margin
    first = "".join(line[5:] for line in lines[starts[0]:starts[1]])
    assert first.replace(" ", "") == OBSERVATIONS[0].replace(" ", "")


# --- a notebook ---------------------------------------------------------------------------
@pytest.fixture
def notebook(monkeypatch):
    """Pretend to be inside Jupyter; yields the list of (html, plain) bundles displayed."""
    shown = []
    monkeypatch.setattr(console, "_terminal", lambda: Console(force_jupyter=True))
    monkeypatch.setattr(console, "_show_html", lambda html, plain: shown.append((html, plain)))
    return shown


def test_notebook_gets_an_html_table_with_escaped_cells(notebook):
    print_table(["a<b", "数值"], [["x & y", "1.5×"], ["中文", "-"]])
    (html, plain), = notebook
    assert html.startswith("<table>") and "a&lt;b" in html and "x &amp; y" in html and "中文" in html
    assert html.count('<td style="text-align:right">') == 2  # the numeric column
    _check_alignment(_table_lines(plain))


def test_notebook_gets_an_html_list_of_observations(notebook):
    print_observations(["一 <b>", "二"])
    (html, plain), = notebook
    assert "<ol><li>一 &lt;b&gt;</li><li>二</li></ol>" in html
    assert "  2. 二" in plain


# --- wrapping -----------------------------------------------------------------------------
@given(st.lists(st.sampled_from(["中", "文", "，", "。", "ab", "FP8", "7.6×", " ", "——"]), max_size=60),
       st.integers(min_value=6, max_value=40))
def test_wrap_cells_keeps_every_character_and_respects_the_width(parts, width):
    text = "".join(parts)
    lines = wrap_cells(text, width)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    for line in lines:  # only closing punctuation may hang past the margin
        assert cell_len(line.rstrip("，。—×")) <= width, line


def test_wrap_cells_never_starts_a_line_with_closing_punctuation():
    lines = wrap_cells("一二三四五，六七八九十。" * 5, 10)
    assert all(line[0] not in "，。" for line in lines)


# --- numbers ------------------------------------------------------------------------------
@pytest.mark.parametrize("x, text", [
    (989.4e12, "989.4 T"), (1978.9e12, "1.979 P"), (15e15, "15 P"), (3.35e12, "3.35 T"), (591, "591 "),
    (999.96e12, "1 P"), (0.0, "0 "), (-2.5e9, "-2.5 G"), (4.5e-3, "4.5 m"),
])
def test_fmt_num_uses_si_prefixes(x, text):
    assert fmt_num(x) == text


def test_fmt_num_composes_with_a_unit():
    assert f"{fmt_num(989.4e12)}FLOP/s" == "989.4 TFLOP/s"


@pytest.mark.parametrize("x, text", [(168.75e9, "168.8 GB"), (119.25e9, "119.2 GB"), (288e9, "288 GB"),
                                     (8e12, "8 TB"), (512, "512 B")])
def test_fmt_bytes_is_decimal(x, text):
    assert fmt_bytes(x) == text


@given(st.floats(min_value=1e-9, max_value=1e20) | st.floats(min_value=-1e20, max_value=-1e-9))
def test_fmt_num_reads_back_within_rounding(x):
    mantissa, prefix = fmt_num(x).split(" ")
    scale = {"E": 1e18, "P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6, "k": 1e3, "": 1.0,
             "m": 1e-3, "µ": 1e-6, "n": 1e-9}[prefix]
    assert 1 <= abs(float(mantissa)) < 1000 or prefix in ("E", "n")
    assert float(mantissa) * scale == pytest.approx(x, rel=5e-4)


def test_fmt_num_refuses_an_unpublished_figure():
    with pytest.raises(MissingFigureError, match="Rubin.*power_w"):
        fmt_num(RUBIN.power_w)
