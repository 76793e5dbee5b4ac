"""Per-request output capture: split at the worker's end markers, capped, never unbounded."""

from __future__ import annotations

from autograder.sandbox.codec import end_marker
from autograder.sandbox.output import OutputCollector

NONCE = b"0123456789abcdef"


def feed_in_pieces(collector: OutputCollector, data: bytes, piece: int) -> None:
    for start in range(0, len(data), piece):
        collector.feed(data[start:start + piece])


def test_output_is_split_at_markers_even_when_chunks_cut_them():
    """Does each request get exactly its own output, whatever the chunk boundaries?"""
    stream = b"first\n" + end_marker(NONCE, 5) + b"second\n" + end_marker(NONCE, 6) + b"after"
    for piece in (1, 2, 3, 7, len(stream)):
        collector = OutputCollector(NONCE, cap=1000)
        collector.expect(range(1, 10))
        feed_in_pieces(collector, stream, piece)
        assert collector.take(5) == "first\n"
        assert collector.take(6) == "second\n"
        assert collector.take(7) == "after"


def test_output_beyond_the_cap_is_counted_not_kept():
    collector = OutputCollector(NONCE, cap=100)
    collector.expect(range(1, 10))
    feed_in_pieces(collector, b"x" * 10_000_000 + end_marker(NONCE, 1), 65536)
    text = collector.take(1)
    assert text.startswith("x" * 100)
    assert text.endswith("[… 9999900 bytes dropped]")
    assert len(text) < 200


def test_marker_with_another_nonce_is_ordinary_output():
    """A student cannot end someone else's segment by printing a guessed marker."""
    fake = end_marker(b"fffffffffffffff0", 1)
    collector = OutputCollector(NONCE, cap=1000)
    collector.expect(range(1, 10))
    collector.feed(b"a" + fake + b"b" + end_marker(NONCE, 1))
    assert collector.take(1).encode() == b"a" + fake + b"b"


def test_marker_like_text_without_digits_is_kept():
    collector = OutputCollector(NONCE, cap=1000)
    collector.expect(range(1, 10))
    bogus = b"\x00\x1bSBX" + NONCE + b":abc\x1b\x00"
    collector.feed(bogus + end_marker(NONCE, 2))
    assert collector.take(2).encode() == bogus


def test_take_all_includes_what_followed_the_marker():
    """A dying worker's last words come after its marker; they must not be lost."""
    collector = OutputCollector(NONCE, cap=1000)
    collector.expect(range(1, 10))
    collector.feed(b"call\n" + end_marker(NONCE, 3) + b"Traceback ...")
    assert collector.take_all(3) == "call\nTraceback ..."


def test_invalid_utf8_is_replaced_not_fatal():
    collector = OutputCollector(NONCE, cap=1000)
    collector.expect(range(1, 10))
    collector.feed(b"\xff\xfeok" + end_marker(NONCE, 1))
    assert collector.take(1).endswith("ok")
