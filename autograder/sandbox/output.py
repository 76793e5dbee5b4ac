"""Student stdout/stderr: split per request at the worker's end markers, capped per request."""

from __future__ import annotations

from .codec import MARKER_HEAD, MARKER_TAIL

_MAX_ID_DIGITS = 20


class OutputCollector:
    """Receives the raw output stream in chunks of any size; keeps the first `cap` bytes of each
    request's output and only counts the rest, so 200 MB printed costs `cap` bytes of memory.

    Only markers of the requests in flight (`expect`) end a segment; any other marker, forged by
    student code with an id of its own, is plain output. So whatever the worker writes, the
    collector holds at most one segment per request in flight."""

    def __init__(self, nonce: bytes, cap: int):
        self._prefix = MARKER_HEAD + nonce + b":"
        self._longest_marker = len(self._prefix) + _MAX_ID_DIGITS + len(MARKER_TAIL)
        self._cap = cap
        self._pending = bytearray()   # not yet scanned for a marker (bounded by one marker's length)
        self._kept = bytearray()
        self._dropped = 0
        self._finished: dict[int, str] = {}
        self._expected: frozenset[int] = frozenset()

    def expect(self, request_ids) -> None:
        """The requests whose end markers may arrive from now on (those just sent)."""
        self._expected = frozenset(request_ids)

    def feed(self, chunk: bytes) -> None:
        self._pending += chunk
        while True:
            at = self._pending.find(self._prefix)
            if at < 0:
                # Keep a tail that could be the start of a marker split across chunks.
                keep = min(len(self._pending), len(self._prefix) - 1)
                self._keep(self._pending[:len(self._pending) - keep])
                del self._pending[:len(self._pending) - keep]
                return
            digits_from = at + len(self._prefix)
            tail = self._pending.find(MARKER_TAIL, digits_from, digits_from + _MAX_ID_DIGITS + 2)
            if tail < 0 and len(self._pending) - at < self._longest_marker:
                self._keep(self._pending[:at])
                del self._pending[:at]
                return  # the rest of the marker has not arrived yet
            digits = bytes(self._pending[digits_from:tail]) if tail >= 0 else b""
            if not digits.isdigit() or int(digits) not in self._expected or int(digits) in self._finished:
                self._keep(self._pending[:at + 1])  # looked like a marker but is not one
                del self._pending[:at + 1]
                continue
            self._keep(self._pending[:at])
            del self._pending[:tail + len(MARKER_TAIL)]
            self._finished[int(digits)] = self._close_segment()

    def take(self, request_id: int) -> str:
        """The output of `request_id`: up to its end marker if it arrived, else all so far."""
        if request_id in self._finished:
            return self._finished.pop(request_id)
        self._keep(self._pending)
        self._pending.clear()
        return self._close_segment()

    def take_all(self, request_id: int) -> str:
        """`request_id`'s output and whatever came after it (used when the worker died: its last
        words may follow the marker)."""
        done = self._finished.pop(request_id, "")
        rest = self.take(-1)
        return done + rest if done and rest else done or rest

    def discard(self) -> None:
        """Forget everything not yet taken (output printed between requests)."""
        self._pending.clear()
        self._kept.clear()
        self._dropped = 0
        self._finished.clear()

    def _keep(self, data) -> None:
        room = self._cap - len(self._kept)
        if room >= len(data):
            self._kept += data
        else:
            if room > 0:
                self._kept += data[:room]
            self._dropped += len(data) - max(room, 0)

    def _close_segment(self) -> str:
        text = self._kept.decode("utf-8", "replace")
        if self._dropped:
            text += f"\n[… {self._dropped} bytes dropped]"
        self._kept = bytearray()
        self._dropped = 0
        return text
