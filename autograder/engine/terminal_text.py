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


def invisible(char: str) -> bool:
    """The one rule for what the terminal (show_controls) and the CSVs (student_cell) show as an
    escape: controls, and the invisible ones: zero-width and bidi marks (U+202E, U+2066-2069), line
    separators, tags, private and unassigned code points."""
    return unicodedata.category(char) in _INVISIBLE or bool(_CONTROL_CHARS.match(char) or _TERMINAL_CONTROLS.match(char))
