"""Safe wire format between the trusted parent and the sandboxed worker.

One message is one frame:

    MAGIC (4 bytes) | header length (u32) | body length (u64) | JSON header | body

The JSON header carries control fields and a tree of value nodes; numeric arrays travel as raw
little-endian buffers in the body, referenced by offset. Nothing is ever pickled: decoding is
`json.loads` plus `np.frombuffer` with a whitelisted dtype, so a hostile worker can at worst send
a malformed frame (`WireError`), never run code in the parent.

Value nodes: None, bool, int, float and str are JSON scalars; a list is a JSON array; anything
else is an object tagged by "~" (dict, tuple, ndarray, scalar, unsupported, rebuilt).

The format knows no assignment: a value that is not plain data crosses as `Rebuilt(factory,
data)`, plain data plus the name of a factory ("module:qualified.name") that the assignment
declares; the worker rebuilds it by calling that factory, and only a declared one.

This module is also bound read-only into the sandbox and imported there as a top-level module,
so it imports only the standard library and numpy.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

MAGIC = b"SBX1"
PREFIX = struct.Struct("<4sIQ")
MARKER_HEAD = b"\x00\x1bSBX"   # end-of-request marker in the output pipe: HEAD nonce ":" id TAIL
MARKER_TAIL = b"\x1b\x00"
MAX_HEADER_BYTES = 4 * 1024**2   # JSON part of a frame: bounds what json.loads builds in the parent
MAX_DEPTH = 64              # nesting of lists/dicts/tuples
MAX_NODES = 1_000_000       # value nodes per message
MAX_NDIM = 32
MAX_TEXT = 1_000_000        # characters of one str value
TAG = "~"

# Fixed-size numeric, boolean and fixed-width string dtypes; never object, void or structured.
_DTYPE_PATTERN = re.compile(r"^(\|b1|[<|][iu]1|<[iu][248]|<f(2|4|8|16)|<c(8|16|32)|<U\d{1,6}|\|S\d{1,6})$")


class WireError(ValueError):
    """A frame or value node that does not follow the wire format."""


class ResultTooLarge(ValueError):
    """A value whose encoding would exceed the message size limit."""


_FACTORY_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


@dataclass(frozen=True)
class Rebuilt:
    """An argument sent into the sandbox as plain `data`; the worker passes the decoded data to
    `factory` ("module:qualified.name", resolved inside the sandbox), which the assignment must
    declare. Travels parent -> worker only."""

    factory: str
    data: Any


def check_factory_name(name: object) -> str:
    """`name` if it has the form "module:qualified.name", else ValueError."""
    if not isinstance(name, str) or not _FACTORY_NAME.match(name):
        raise ValueError(f"factory {name!r} must look like 'module:Class.method'")
    return name


@dataclass(frozen=True)
class Unsupported:
    """Stands in for a value that cannot cross the wire (an object array, a function, ...)."""

    type_name: str
    reason: str = ""

    def __str__(self) -> str:
        text = f"unsupported type {self.type_name}"
        return f"{text} ({self.reason})" if self.reason else text


def wire_size(value: object) -> int:
    """About how many bytes `value` takes in a frame (arrays by their buffer; JSON otherwise),
    for callers that bound a reply by the size of the value they expect."""
    if isinstance(value, (np.ndarray, np.generic)):
        return int(value.nbytes) + 100
    if isinstance(value, str):
        return len(value) * 4 + 2
    if isinstance(value, (list, tuple)):
        return 16 + sum(wire_size(item) for item in value)
    if isinstance(value, dict):
        return 32 + sum(wire_size(k) + wire_size(v) for k, v in value.items())
    return 24


def end_marker(nonce: bytes, request_id: int) -> bytes:
    """What the worker writes to the output pipe after a request's output, so the parent can
    attribute output to requests even when replies are streamed."""
    return MARKER_HEAD + nonce + b":%d" % request_id + MARKER_TAIL


# --------------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------------
class Encoder:
    """Turns values into JSON nodes plus body buffers, refusing to grow past `max_bytes`.

    A value of an unsupported type becomes an `Unsupported` node, or, with `strict=True` (the
    parent encoding arguments), a ValueError.
    """

    def __init__(self, max_bytes: int, *, strict: bool = False, factories: tuple[str, ...] | None = None):
        self.max_bytes = max_bytes
        self.strict = strict
        self.factories = factories   # the Rebuilt factories allowed (None: any well-formed name)
        self._buffers: list[bytes] = []
        self._body_len = 0
        self._size = 0      # running estimate of the frame size, to stop early on huge values
        self._nodes = 0

    def value(self, obj: object) -> Any:
        """The node for `obj`; parts that cannot be encoded become `Unsupported` nodes."""
        return self._node(obj, 0)

    def value_or_unsupported(self, obj: object) -> Any:
        """Like `value`, but a too-large value becomes one `Unsupported` node (buffers rolled back)."""
        mark = (len(self._buffers), self._body_len, self._size, self._nodes)
        try:
            return self._node(obj, 0)
        except ResultTooLarge as exc:
            del self._buffers[mark[0]:]
            self._body_len, self._size, self._nodes = mark[1:]
            return _unsupported_node(_type_name(obj), str(exc))

    def frame(self, header: Mapping[str, Any]) -> bytes:
        """The complete frame for `header` (which holds nodes made by this encoder)."""
        try:
            text = json.dumps(header, allow_nan=True, separators=(",", ":"), ensure_ascii=False)
        except ValueError as exc:  # e.g. an int beyond the str-conversion digit limit
            raise ResultTooLarge(f"value cannot be written as JSON: {exc}") from None
        head = text.encode("utf-8", "surrogatepass")
        if len(head) > MAX_HEADER_BYTES:
            raise ResultTooLarge(f"value needs {_mb(len(head))} of JSON; the limit is "
                                 f"{_mb(MAX_HEADER_BYTES)} (return large data as a numpy array)")
        if len(head) + self._body_len > self.max_bytes:
            raise ResultTooLarge(f"value needs {_mb(len(head) + self._body_len)} on the wire; "
                                 f"the limit is {_mb(self.max_bytes)}")
        return b"".join([PREFIX.pack(MAGIC, len(head), self._body_len), head, *self._buffers])

    # -- internals -------------------------------------------------------------------------
    def _unsupported(self, type_name: str, reason: str = "") -> dict:
        if self.strict:
            detail = f" ({reason})" if reason else ""
            raise ValueError(f"cannot send a {type_name}{detail} into the sandbox: use None, bool, int, "
                             f"float, str, list, tuple, dict, numpy arrays/scalars or Rebuilt")
        return _unsupported_node(type_name, reason)

    def _charge(self, nbytes: int) -> None:
        self._size += nbytes
        if self._size > self.max_bytes:
            raise ResultTooLarge(f"value needs more than {_mb(self.max_bytes)} on the wire; "
                                 f"the limit is {_mb(self.max_bytes)}")

    def _node(self, obj: object, depth: int) -> Any:
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise ResultTooLarge(f"value has more than {MAX_NODES} elements")
        kind = type(obj)
        if obj is None or kind is bool:
            return obj
        if kind is int:
            if obj.bit_length() > 4000:  # json refuses to write ints beyond ~4300 digits
                return self._unsupported("int", "more than 4000 bits")
            self._charge(8)
            return obj
        if kind is float:
            self._charge(8)
            return obj
        if kind is str:
            if len(obj) > MAX_TEXT:
                return self._unsupported("str", f"longer than {MAX_TEXT} characters")
            self._charge(len(obj) + 2)
            return obj
        if issubclass(kind, np.ndarray):
            return self._array(np.asarray(obj), "ndarray")
        if issubclass(kind, np.generic):
            return self._array(np.asarray(obj), "scalar")
        if depth >= MAX_DEPTH:
            return self._unsupported(_type_name(obj), f"nested deeper than {MAX_DEPTH} levels")
        if issubclass(kind, list):
            return [self._node(item, depth + 1) for item in list.__iter__(obj)]
        if issubclass(kind, tuple):
            return {TAG: "tuple", "items": [self._node(item, depth + 1) for item in tuple.__iter__(obj)]}
        if issubclass(kind, dict):
            items = [[self._node(k, depth + 1), self._node(v, depth + 1)] for k, v in dict.items(obj)]
            return {TAG: "dict", "items": items}
        if isinstance(obj, Rebuilt):
            name = check_factory_name(obj.factory)
            if self.factories is not None and name not in self.factories:
                raise ValueError(f"factory {name!r} is not declared by the assignment "
                                 f"(declared: {', '.join(self.factories) or 'none'})")
            return {TAG: "rebuilt", "factory": name, "data": self._node(obj.data, depth + 1)}
        if kind is Unsupported and not self.strict:
            return _unsupported_node(obj.type_name, obj.reason)
        return self._unsupported(_type_name(obj))

    def _array(self, arr: np.ndarray, tag: str) -> Any:
        dtype = arr.dtype
        if not _DTYPE_PATTERN.match(dtype.newbyteorder("<").str if dtype.byteorder == ">" else dtype.str):
            kind = "ndarray" if tag == "ndarray" else "numpy scalar"
            return self._unsupported(f"{kind}[{dtype}]")
        self._charge(arr.nbytes)  # before copying: refuse a huge array without touching it
        if dtype.byteorder == ">":
            dtype = dtype.newbyteorder("<")
            arr = arr.astype(dtype)
        data = np.ascontiguousarray(arr).tobytes()
        node = {TAG: tag, "dtype": dtype.str, "shape": list(arr.shape), "offset": self._body_len,
                "nbytes": len(data)}
        self._buffers.append(data)
        self._body_len += len(data)
        return node


def _unsupported_node(type_name: str, reason: str = "") -> dict:
    return {TAG: "unsupported", "type": type_name[:200], "reason": reason[:500]}


def _type_name(obj: object) -> str:
    kind = type(obj)
    module = getattr(kind, "__module__", "") or ""
    name = getattr(kind, "__qualname__", None) or getattr(kind, "__name__", "?")
    name = name if isinstance(name, str) else "?"
    return name if module in ("builtins", "") else f"{module}.{name}"


def _mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:.1f} MB"


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------
def parse_prefix(prefix: bytes, max_bytes: int) -> tuple[int, int]:
    """(header length, body length) of a frame, refusing bad magic and oversized frames."""
    magic, head_len, body_len = PREFIX.unpack(prefix)
    if magic != MAGIC:
        raise WireError(f"bad frame magic {magic!r}")
    if head_len > MAX_HEADER_BYTES:
        raise WireError(f"reply header of {_mb(head_len)} exceeds the {_mb(MAX_HEADER_BYTES)} limit")
    if head_len + body_len > max_bytes:
        raise WireError(f"reply of {_mb(head_len + body_len)} exceeds the {_mb(max_bytes)} limit")
    return head_len, body_len


def parse_header(head: bytes) -> dict:
    """The JSON header of a frame, which must be an object."""
    try:
        header = json.loads(head.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as exc:
        raise WireError(f"header is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(header, dict):
        raise WireError("header is not a JSON object")
    return header


class Decoder:
    """Turns nodes back into values, validating every node against the frame's body.

    `rebuild(factory, data)` makes the object of a rebuilt node; None (the parent's side)
    refuses rebuilt nodes, which only ever travel parent -> worker.
    """

    def __init__(self, body: bytes, *, rebuild: Callable[[str, object], object] | None = None):
        self._body = memoryview(body)
        self._rebuild = rebuild
        self._nodes = 0
        # Bytes of the body the arrays decoded so far were made from. An encoder gives each array
        # bytes of its own, so the arrays never add up to more than the body; a frame naming one
        # buffer from many nodes would have the receiver copy it once per node (an 8 MB reply
        # held as gigabytes by the grader).
        self._body_read = 0

    def value(self, node: Any) -> object:
        return self._value(node, 0)

    def _value(self, node: Any, depth: int) -> object:
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise WireError(f"more than {MAX_NODES} value nodes")
        if depth > MAX_DEPTH + 1:
            raise WireError(f"value nested deeper than {MAX_DEPTH} levels")
        if node is None or isinstance(node, (bool, int, str)):
            return node
        if isinstance(node, float):
            return node
        if isinstance(node, list):
            return [self._value(item, depth + 1) for item in node]
        if not isinstance(node, dict):
            raise WireError(f"unexpected node of type {type(node).__name__}")
        tag = node.get(TAG)
        if tag == "tuple":
            return tuple(self._value(item, depth + 1) for item in _field(node, "items", list))
        if tag == "dict":
            result = {}
            for pair in _field(node, "items", list):
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise WireError("dict item is not a [key, value] pair")
                key = self._value(pair[0], depth + 1)
                try:
                    hash(key)
                except TypeError:
                    raise WireError(f"unhashable dict key of type {type(key).__name__}") from None
                result[key] = self._value(pair[1], depth + 1)
            return result
        if tag == "ndarray":
            return self._array(node)
        if tag == "scalar":
            arr = self._array(node)
            if arr.shape != ():
                raise WireError("scalar node with a non-empty shape")
            return arr[()]
        if tag == "unsupported":
            return Unsupported(_field(node, "type", str)[:200], _field(node, "reason", str)[:500])
        if tag == "rebuilt" and self._rebuild is not None:
            return self._rebuild(_field(node, "factory", str), self._value(node.get("data"), depth + 1))
        raise WireError(f"unknown node tag {str(tag)[:40]!r}")

    def _array(self, node: dict) -> np.ndarray:
        dtype_str = _field(node, "dtype", str)
        if not _DTYPE_PATTERN.match(dtype_str):
            raise WireError(f"dtype {dtype_str[:40]!r} is not allowed")
        dtype = np.dtype(dtype_str)
        shape = _field(node, "shape", list)
        if len(shape) > MAX_NDIM or not all(type(n) is int and n >= 0 for n in shape):
            raise WireError(f"bad array shape {str(shape)[:80]}")
        offset, nbytes = _field(node, "offset", int), _field(node, "nbytes", int)
        if offset < 0 or nbytes < 0 or offset + nbytes > len(self._body):
            raise WireError("array buffer lies outside the message body")
        if math.prod(shape) * dtype.itemsize != nbytes:
            raise WireError(f"array buffer of {nbytes} bytes does not match shape {shape} and dtype {dtype}")
        self._body_read += nbytes
        if self._body_read > len(self._body):
            raise WireError(f"arrays name more bytes than the message body holds ({len(self._body)}): "
                            "a buffer is named by more than one node")
        try:   # an empty buffer may still claim a shape (or a 0-byte dtype) numpy cannot make
            arr = np.frombuffer(self._body[offset:offset + nbytes], dtype=dtype).reshape(shape).copy()
        except ValueError as exc:
            raise WireError(f"array of shape {str(shape)[:80]} and dtype {dtype} cannot be made: "
                            f"{str(exc)[:100]}") from None
        if dtype.kind == "b":  # only 0/1 bytes are valid booleans
            arr = arr.view(np.uint8) != 0
        return arr


def _field(node: dict, name: str, kind: type) -> Any:
    value = node.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise WireError(f"node field {name!r} is not a {kind.__name__}")
    return value
