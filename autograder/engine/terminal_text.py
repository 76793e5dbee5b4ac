"""Text a student controls (folder names, messages, answers) as a terminal or a log shows it: no
control character acts on the terminal, no invisible one reorders or hides the line, and bytes
that are no UTF-8 are shown as escapes. No import of the kit's own: every layer may use it.
"""

from __future__ import annotations

import re
import unicodedata

# C0 controls but tab and newline, DEL, C1 controls: nothing a reader of the text needs.
_CONTROL_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_control_chars(text: str) -> str:
    return _CONTROL_CHARS.sub("", text)


_TERMINAL_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def show_controls(text) -> str:
    """`text` for a terminal or a log: each control character (ESC sequences, BEL, line breaks) as
    a visible \\xNN escape, and every other invisible one student_cell escapes (bidi overrides and
    isolates, zero-width marks, line and paragraph separators, tags: `invisible`) as \\uNNNN. A
    student's folder name or message is text on the instructor's screen, never a command to their
    terminal (OSC 52 writes the clipboard), never a forged line and never reordered by the terminal."""
    text = utf8_text(str(text))
    if text.isprintable():            # the common case; every invisible character is unprintable
        return text
    return "".join(_escaped(c) if invisible(c) else c for c in text)


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def utf8_text(text: str) -> str:
    """`text` as valid UTF-8 text: a file name's bytes that are no UTF-8 (Python holds them as lone
    surrogates, which no UTF-8 file can store) shown as \\xNN escapes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape" if _only_escaped_bytes(text) else "backslashreplace") \
                   .decode("utf-8", "backslashreplace")


def _only_escaped_bytes(text: str) -> bool:
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)


_INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
# What may be invisible: all but printable ASCII, tab and newline, and the CJK ideographs and
# punctuation the kit's own Chinese text is made of (all visible): `invisible` judges the rest.
_MAYBE_INVISIBLE = re.compile("[^\t\n\x20-\x7e\u3001-\u303f\u4e00-\u9fa5\uff01-\uff5e]")


def invisible(char: str) -> bool:
    """The one rule for what the terminal (show_controls) and the CSVs (student_cell) show as an
    escape: controls, and the invisible ones: zero-width and bidi marks (U+202E, U+2066-2069), line
    separators, tags, private and unassigned code points."""
    return unicodedata.category(char) in _INVISIBLE or bool(_CONTROL_CHARS.match(char) or _TERMINAL_CONTROLS.match(char))


def show_invisible(text: str) -> str:
    """`text` for a file an instructor opens in a terminal or a Markdown preview (feedback/*.md):
    line breaks and tabs kept, every other invisible character (bidi overrides and isolates,
    zero-width marks, line separators, controls) shown as the escape show_controls gives it."""
    return _MAYBE_INVISIBLE.sub(lambda m: _escaped(m[0]) if invisible(m[0]) else m[0], text)


def json_escaped_invisible(text: str) -> str:
    """JSON text with every invisible character of its strings written as JSON's own \\uXXXX
    escape (a pair of them beyond the BMP): it reads back as the same characters, and `cat` or
    `less` of the file shows the escape instead of a line the terminal reorders or hides. A raw
    control character in JSON text is the layout's own whitespace (json escapes those in strings)."""
    return _MAYBE_INVISIBLE.sub(lambda m: _json_escape(m[0]) if invisible(m[0]) and m[0] >= " " else m[0], text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
