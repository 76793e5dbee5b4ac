"""Packed code: source that runs other source hidden in a string (`exec(zlib.decompress(
base64.b64decode("...")))`), which a token comparison sees as one string literal.

Read statically with `ast`, never run. Packing sites: each call of exec/eval/compile (also
through an alias, `builtins.exec` or `getattr(..., "exec")`), whose argument is evaluated by a
small interpreter that knows only literals, constants assigned once, `+`, slicing, and pure
decoders (base64/binascii, zlib/gzip/bz2/lzma, codecs, bytes.fromhex, str/bytes conversions);
a chain of those decoders outside any exec whose result is Python code (exec may be hidden), or
whose argument cannot be evaluated (data read at run time, e.g. from the notebook's attachments,
may be code written to a module and imported);
marshal/pickle loads; a builtin looked up by a computed name; a plain string literal that is Python
defining a function or class (the code may write it to a module file and import it, no exec).
Every value is bounded (MAX_DECODED bytes), its size computed before it is built where it can be
(a join, `+`, a slice) and decompression stopped past it; so are the nesting of packed code in
packed code (MAX_DEPTH) and, through one Budget shared by a submission's sources, sites and
levels, the decoded text read (MAX_TOTAL characters, each charged before it is parsed) and the
bytes built on the way (MAX_BUILT). Names and calls are evaluated once per source, however many
sites repeat them. What cannot be evaluated so (a key computed at run time, marshal or pickle
bytes, exec handed around as a value, a call that fails) is an undecodable site. Every site is
reported; the decoded text is compared too.
"""

from __future__ import annotations

import ast
import base64
import binascii
import bz2
import codecs
import lzma
import operator
import re
import zlib
from dataclasses import dataclass, field

MAX_DECODED = 1 << 20       # bytes one decoded value may have
MAX_TOTAL = 4 << 20         # characters of decoded text read from one source, nesting included
MAX_BUILT = 16 << 20        # bytes built while decoding one source (or submission), nesting included
MAX_DEPTH = 8               # packed code within packed code
MAX_EXPRESSION_DEPTH = 200  # nested calls/operators in one expression
MAX_STEPS = 100_000         # operations evaluated for one site
RUNNERS = {"exec", "eval", "compile"}
OPAQUE = {"marshal.loads": "marshal bytes (compiled code; not readable without running it)",
          "marshal.load": "marshal bytes (compiled code; not readable without running it)",
          "pickle.loads": "pickle bytes (not readable without running them)",
          "types.CodeType": "a code object built from bytes",
          "types.FunctionType": "a function built from a code object"}
_IPYTHON_LINE = re.compile(r"^\s*[%!]")
TOO_LONG = "more decoded text than the comparison reads in all"
SPENT = "not decoded: what the comparison decodes of one submission is spent"
CHUNK = 1 << 16             # characters encoded at a time to measure an encoding


class Undecodable(Exception):
    """Why a packed value cannot be read statically."""


class OverBudget(Undecodable):
    """Not decoded because the budget is spent: reported even where the value may not be code."""


@dataclass
class Site:
    line: int               # in the text it was found in
    how: str                # e.g. "exec(zlib.decompress(base64.b64decode(...)))"
    decoded: str | None     # the hidden source, or None
    reason: str = ""        # why not decoded
    depth: int = 0          # 0: in the student's own text; 1: inside decoded code; ...
    unread: bool = False    # not decoded for the budget: it may be code

    def describe(self) -> str:
        where = f"line {self.line}" + (f" of code decoded {self.depth} level(s) deep" if self.depth else "")
        if self.decoded is not None:
            said = f"{where}: {self.how} decoded ({len(self.decoded)} characters)"
        else:
            said = f"{where}: {self.how} undecodable ({self.reason})"
        return said.encode("utf-8", "backslashreplace").decode("utf-8")   # a literal's lone surrogate, written


@dataclass
class Unpacked:
    sites: list[Site] = field(default_factory=list)

    @property
    def decoded_texts(self) -> list[tuple[Site, str]]:
        return [(s, s.decoded) for s in self.sites if s.decoded is not None]

    @property
    def status(self) -> str:
        """'' (no packed code), 'decoded' or 'undecodable' (some site could not be read)."""
        if not self.sites:
            return ""
        return "undecodable" if any(s.decoded is None for s in self.sites) else "decoded"


@dataclass
class Budget:
    """What decoding may still cost, shared by a submission's files, cells, sites and nesting
    levels: `text`, characters of decoded text read (each is parsed, and compared if it is code);
    `built`, bytes the evaluator builds on the way. Charged as each site is decoded: 8,000 sites
    of 1 MiB each were all evaluated and parsed before the first was charged (hours of CPU)."""
    text: int = field(default_factory=lambda: MAX_TOTAL)
    built: int = field(default_factory=lambda: MAX_BUILT)

    @property
    def spent(self) -> bool:
        return self.text <= 0 or self.built <= 0

    def build(self, size: int, what: str) -> None:
        """Charges a value of `size` before it is built; refuses one larger than a value may be
        (a join of 40,000 copies of 1 MiB asked for 40 GiB at once) or than is left."""
        if size > MAX_DECODED:
            raise Undecodable(f"{what} would be more than {MAX_DECODED >> 20} MiB")
        if size > self.built:
            raise OverBudget(f"more than {MAX_BUILT >> 20} MiB built while decoding")
        self.built -= size

    def read(self, text: str) -> None:
        """Charges a decoded text before anything parses it."""
        if len(text) > self.text:
            raise OverBudget(TOO_LONG)
        self.text -= len(text)


# ------------------------------------------------------------------ bounded decoders
def _bytes(value, what: str) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        try:
            return value.encode("ascii")       # what the base64/hex decoders accept for str
        except UnicodeEncodeError:
            raise Undecodable(f"{what} of non-ASCII text") from None
    raise Undecodable(f"{what} of a {type(value).__name__}")


def _bounded(decompressor, data: bytes, what: str) -> bytes:
    try:
        out = decompressor.decompress(data, MAX_DECODED + 1)
    except Exception as exc:   # noqa: BLE001  (corrupt data: any decoder error)
        raise Undecodable(f"{what} fails: {exc}") from None
    if len(out) > MAX_DECODED:
        raise Undecodable(f"{what} gives more than {MAX_DECODED >> 20} MiB")
    return out


def _a85(data, *args):
    """Ascii85 decodes `z` (and `y`, with foldspaces) to four bytes: its output is sized first."""
    raw = _bytes(data, "base64.a85decode")
    if len(raw) + 3 * (raw.count(b"z") + raw.count(b"y")) > MAX_DECODED:
        raise Undecodable(f"base64.a85decode would give more than {MAX_DECODED >> 20} MiB")
    return _plain(base64.a85decode, "base64.a85decode")(raw, *args)


def _zlib(data, wbits=zlib.MAX_WBITS, *_):
    return _bounded(zlib.decompressobj(wbits), _bytes(data, "zlib.decompress"), "zlib.decompress")


def _gzip(data, *_):
    return _bounded(zlib.decompressobj(16 + zlib.MAX_WBITS), _bytes(data, "gzip.decompress"), "gzip.decompress")


def _bz2(data, *_):
    return _bounded(bz2.BZ2Decompressor(), _bytes(data, "bz2.decompress"), "bz2.decompress")


def _lzma(data, *_):
    return _bounded(lzma.LZMADecompressor(), _bytes(data, "lzma.decompress"), "lzma.decompress")


def _plain(function, name):
    """A decoder whose output is never larger than its input (base64, hex; Ascii85 is sized by _a85)."""
    def decode(data, *args):
        try:
            return function(_bytes(data, name), *args)
        except (binascii.Error, ValueError, TypeError) as exc:
            raise Undecodable(f"{name} fails: {exc}") from None
    return decode


_CODECS = {"base64": _plain(base64.b64decode, "base64"), "base_64": _plain(base64.b64decode, "base64"),
           "zlib": _zlib, "zip": _zlib, "zlib_codec": _zlib, "bz2": _bz2, "bz2_codec": _bz2,
           "hex": _plain(binascii.unhexlify, "hex"), "hex_codec": _plain(binascii.unhexlify, "hex"),
           "base64_codec": _plain(base64.b64decode, "base64")}


def _codecs_decode(value, encoding="utf-8", *_):
    name = str(encoding).lower().replace("-", "_")
    if name in _CODECS:
        return _CODECS[name](value)
    if name in ("rot13", "rot_13"):
        return codecs.decode(_text(value), "rot13")
    return _text_decode(value, encoding)


def _codecs_encode(value, encoding="utf-8", *_):
    if str(encoding).lower().replace("-", "_") in ("rot13", "rot_13"):
        return codecs.encode(_text(value), "rot13")
    if isinstance(value, str):
        return _encode(value, encoding)
    raise Undecodable(f"codecs.encode({encoding!r})")


def _text(value) -> str:
    if not isinstance(value, str):
        raise Undecodable(f"text expected, got {type(value).__name__}")
    return value


def _text_decode(value, encoding="utf-8", errors="strict"):
    if not isinstance(value, (bytes, bytearray)):
        raise Undecodable(f".decode() of a {type(value).__name__}")
    try:
        return bytes(value).decode(encoding, errors)     # never more characters than bytes
    except (LookupError, ValueError, TypeError) as exc:
        raise Undecodable(f".decode({encoding!r}) fails: {type(exc).__name__}") from None


def _encode(value, encoding="utf-8", errors="strict"):
    text = _text(value)
    try:
        "".encode(encoding, errors)                      # a text encoding at all
        if _encoded_size(text, encoding, errors) > MAX_DECODED:
            raise Undecodable(f".encode({encoding!r}) would give more than {MAX_DECODED >> 20} MiB")
        return text.encode(encoding, errors)
    except (LookupError, ValueError, TypeError) as exc:
        raise Undecodable(f".encode({encoding!r}) fails: {type(exc).__name__}") from None


def _encoded_size(text: str, encoding: str, errors: str) -> int:
    """About the length of text.encode(encoding), measured a slice at a time and given up on past
    MAX_DECODED: a text codec may make ten bytes of a character (unicode_escape)."""
    encoder = codecs.getincrementalencoder(encoding)(errors)
    size = 0
    for start in range(0, len(text), CHUNK):
        size += len(encoder.encode(text[start:start + CHUNK]))
        if size > MAX_DECODED:
            break
    return size


def _to_bytes(value=b"", encoding=None, *_):
    if isinstance(value, str) and encoding is not None:
        return _encode(value, encoding)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, list) and all(isinstance(v, int) and 0 <= v < 256 for v in value):
        return bytes(value)
    raise Undecodable("bytes() of a value computed at run time")


def _to_str(value="", encoding=None, *_):
    if isinstance(value, (bytes, bytearray)) and encoding is not None:
        return _text_decode(value, encoding)
    if isinstance(value, str):
        return value
    raise Undecodable("str() of a non-text value")


def _fromhex(value):
    try:
        return bytes.fromhex(_text(value))
    except ValueError as exc:
        raise Undecodable(f"bytes.fromhex fails: {exc}") from None


def _chr(value):
    if not isinstance(value, int) or not 0 <= value < 0x110000:
        raise Undecodable("chr() of a value computed at run time")
    return chr(value)


FUNCTIONS = {
    "base64.b64decode": _plain(base64.b64decode, "base64.b64decode"),
    "base64.standard_b64decode": _plain(base64.standard_b64decode, "base64.standard_b64decode"),
    "base64.urlsafe_b64decode": _plain(base64.urlsafe_b64decode, "base64.urlsafe_b64decode"),
    "base64.b32decode": _plain(base64.b32decode, "base64.b32decode"),
    "base64.b16decode": _plain(base64.b16decode, "base64.b16decode"),
    "base64.b85decode": _plain(base64.b85decode, "base64.b85decode"),
    "base64.a85decode": _a85,
    "base64.decodebytes": _plain(base64.decodebytes, "base64.decodebytes"),
    "binascii.a2b_base64": _plain(binascii.a2b_base64, "binascii.a2b_base64"),
    "binascii.unhexlify": _plain(binascii.unhexlify, "binascii.unhexlify"),
    "binascii.a2b_hex": _plain(binascii.a2b_hex, "binascii.a2b_hex"),
    "bytes.fromhex": lambda s: _fromhex(s), "bytearray.fromhex": lambda s: _fromhex(s),
    "zlib.decompress": _zlib, "gzip.decompress": _gzip, "bz2.decompress": _bz2, "lzma.decompress": _lzma,
    "codecs.decode": _codecs_decode, "codecs.encode": _codecs_encode,
    "bytes": _to_bytes, "bytearray": _to_bytes, "str": _to_str, "chr": _chr,
}
METHODS = {"decode": _text_decode, "encode": _encode}


# ------------------------------------------------------------------ the static interpreter
class _Module:
    """Import aliases and module-level constants of one source, for resolving names."""

    def __init__(self, tree: ast.Module):
        self.aliases: dict[str, str] = {}           # local name -> qualified name
        self.assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]     # `import a.b` binds a
                    self.aliases[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(node.value)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
                self.assigned.setdefault(node.target.id, []).append(node.value)   # more than once: not a constant

    def qualified(self, node: ast.expr, depth: int = 0) -> str | None:
        """`zlib.decompress`, `exec`, ... for a callee, through aliases; None if unknown."""
        if depth > 20:
            return None
        if isinstance(node, ast.Name):
            if node.id in self.aliases:
                return self.aliases[node.id]
            values = self.assigned.get(node.id, [])
            if len(values) == 1 and isinstance(values[0], (ast.Name, ast.Attribute, ast.Call)):
                return self.qualified(values[0], depth + 1) or None    # e.g. `run = exec`
            return node.id
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value, depth + 1)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            callee = self.qualified(node.func, depth + 1)
            # __import__("zlib"), importlib.import_module("zlib"), getattr(builtins, "exec")
            if callee in ("__import__", "importlib.import_module") and node.args and _literal(node.args[0]):
                return node.args[0].value
            if callee == "getattr" and len(node.args) >= 2 and _literal(node.args[1]):
                base = self.qualified(node.args[0], depth + 1) or "?"
                return node.args[1].value if node.args[1].value in RUNNERS else f"{base}.{node.args[1].value}"
        return None


def _literal(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _runner(name: str | None) -> str | None:
    if name is None:
        return None
    name = name.removeprefix("builtins.").removeprefix("__builtins__.")
    return name if name in RUNNERS else None


class _Evaluator:
    """Evaluates the sites of one source. A name or a call is evaluated once for all of them (8,000
    sites of `zlib.decompress(Z)` were 8,000 decompressions of 1 MiB), and every value built is
    charged to the budget, before it is built where its size can be known."""

    def __init__(self, module: _Module, budget: Budget):
        self.module = module
        self.budget = budget
        self.steps: list[str] = []      # the decoders applied, innermost first
        self.names: dict[str, tuple[object, list[str]]] = {}  # name -> (value or Undecodable, its steps)
        self.calls: dict[tuple, object] = {}                   # (operation, arguments) -> value or Undecodable
        self.used: set[str] = set()     # names whose steps this site's `how` already says
        self.operations = MAX_STEPS

    def start(self) -> None:
        """A new site: its own steps, and MAX_STEPS operations of its own."""
        self.steps, self.used, self.operations = [], set(), MAX_STEPS

    def text(self, value: bytes) -> str:
        """Decoded bytes as the text a runner reads, once per value (never more characters than bytes)."""
        return self._apply("text", lambda b: bytes(b).decode("utf-8", errors="replace"), [value], len(value))

    def how(self, runner: str | None) -> str:
        """e.g. exec(zlib.decompress(base64.b64decode(...)))"""
        inner = "..."
        for step in self.steps:
            inner = f"({inner}){step}()" if step.startswith(".") else f"{step}({inner})"
        return f"{runner}({inner})" if runner else inner

    def value(self, node: ast.expr, depth: int = 0):
        if depth > MAX_EXPRESSION_DEPTH:
            raise Undecodable("expression nested too deeply")
        self._operation()
        result = self._value(node, depth + 1)
        if isinstance(result, (str, bytes, bytearray, list)) and len(result) > MAX_DECODED:
            raise Undecodable(f"a value larger than {MAX_DECODED >> 20} MiB")
        return result

    def _operation(self) -> None:
        self.operations -= 1
        if self.operations < 0:
            raise Undecodable(f"more than {MAX_STEPS} operations to evaluate")

    def _value(self, node, depth):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes, int)):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = self.value(node.operand, depth)
            if isinstance(operand, int):
                return -operand
            raise Undecodable("- of a value computed at run time")
        if isinstance(node, ast.Name):
            return self._name(node.id, depth)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.value(e, depth) for e in node.elts]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left, depth), self.value(node.right, depth)
            if type(left) is type(right) and isinstance(left, (str, bytes, list)):
                return self._apply("+", operator.add, [left, right], len(left) + len(right))
            raise Undecodable("+ of values computed at run time")
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            return self._slice(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        raise Undecodable(f"{type(node).__name__} computed at run time")

    def _name(self, name: str, depth):
        """A module-level constant, evaluated once for every site (a failure too); its steps are
        said once in each site's `how`."""
        values = self.module.assigned.get(name, [])
        if len(values) != 1 or name in self.module.aliases:
            raise Undecodable(f"{name} is computed at run time")
        if name not in self.names:
            start = len(self.steps)
            try:
                value = self.value(values[0], depth)
            except Undecodable as exc:
                value = exc
            self.names[name] = value, self.steps[start:]
            del self.steps[start:]
        value, steps = self.names[name]
        if name not in self.used:
            self.used.add(name)
            self.steps += steps
        return _raised(value)

    def _slice(self, node: ast.Subscript, depth):
        bounds = [None if part is None else self.value(part, depth)
                  for part in (node.slice.lower, node.slice.upper, node.slice.step)]
        if all(b is None or isinstance(b, int) for b in bounds) and bounds[2] != 0:
            target = self.value(node.value, depth)
            if isinstance(target, (str, bytes, list)):
                size = len(range(*slice(*bounds).indices(len(target))))
                return self._apply("[:]", lambda t, *b: t[slice(*b)], [target, *bounds], size)
        raise Undecodable("a slice computed at run time")

    def _call(self, node: ast.Call, depth):
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Undecodable("a call with * or ** arguments")
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in METHODS and self.module.qualified(func) not in FUNCTIONS:
            target, args = self.value(func.value, depth), self._args(node, depth)
            self.steps.append(f".{func.attr}")
            return self._apply(f".{func.attr}", METHODS[func.attr], [target, *args])
        if isinstance(func, ast.Attribute) and func.attr == "join":
            separator, parts = self.value(func.value, depth), self._args(node, depth)
            return self._apply(".join", lambda s, p: s.join(p), [separator, *parts], _joined_size(separator, parts))
        name = self.module.qualified(func)
        if name in OPAQUE:
            raise Undecodable(OPAQUE[name])
        if _runner(name) == "compile":    # compile(source, ...) runs nothing by itself: its source
            if not node.args:
                raise Undecodable("compile() without a source")
            source = self.value(node.args[0], depth)
            self.steps.append("compile")
            return source
        if name == "map" and len(node.args) == 2:
            return self._map(node, depth)
        if name not in FUNCTIONS:
            raise Undecodable(f"{name or 'a function'}(...) is computed at run time")
        args = self._args(node, depth)
        self.steps.append(name)
        return self._apply(name, FUNCTIONS[name], args)

    def _map(self, node: ast.Call, depth) -> list:
        name = self.module.qualified(node.args[0]) or ""
        if name not in FUNCTIONS:
            raise Undecodable("map() of a function computed at run time")
        values = self.value(node.args[1], depth)
        if not isinstance(values, (list, str, bytes)):
            raise Undecodable("map() over a value computed at run time")
        results = []
        for value in values:
            self._operation()
            results.append(self._apply(name, FUNCTIONS[name], [value]))
        return results

    def _args(self, node: ast.Call, depth) -> list:
        args = [self.value(a, depth) for a in node.args]
        args += [self.value(k.value, depth) for k in node.keywords]   # decoders' keywords are positional too
        return args

    def _apply(self, operation: str, function, args: list, size: int | None = None):
        """function(*args), once per distinct arguments in this source. `size`, when it can be
        known, is charged before anything is built; otherwise (a decoder, which bounds itself)
        what was built is charged after. Any failure of it is an undecodable value."""
        key = (operation, _frozen(args))
        if key not in self.calls:
            try:
                if size is not None:
                    self.budget.build(size, operation)
                result = function(*args)
                if size is None:
                    self.budget.build(len(result) if isinstance(result, (str, bytes, list)) else 1, operation)
            except Undecodable as exc:
                result = exc
            except Exception as exc:   # noqa: BLE001  (a decoder's TypeError for a bad argument, ...)
                result = Undecodable(f"{operation} fails: {type(exc).__name__}")
            self.calls[key] = result
        return _raised(self.calls[key])


def _raised(value):
    """The value, or a fresh copy of the Undecodable it is (one raised again would keep every
    traceback it went through)."""
    if isinstance(value, Undecodable):
        raise type(value)(*value.args)
    return value


def _frozen(value):
    """A hashable stand-in for an evaluated value: lists become tuples, a value's type is kept."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return type(value), value


def _joined_size(separator, args: list) -> int:
    """The length of separator.join(parts), for a join that can be evaluated at all."""
    if not (isinstance(separator, (str, bytes)) and len(args) == 1 and isinstance(args[0], list)
            and all(type(p) is type(separator) for p in args[0])):
        raise Undecodable(".join of values computed at run time")
    parts = args[0]
    return sum(map(len, parts)) + len(separator) * max(len(parts) - 1, 0)


def _parse(source: str) -> ast.Module | None:
    """The source's syntax tree; IPython lines (`%magic`, `!shell`) blanked; None if not Python."""
    lines = ["" if _IPYTHON_LINE.match(line) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


DECODERS = {name for name in FUNCTIONS if name not in ("bytes", "bytearray", "str", "chr")}
BUILTIN_NAMESPACES = {"builtins", "__builtins__", "globals", "vars", "locals"}
# Decoders whose output is text only when text was encoded: one of data read at run time may be code.
RUNTIME_DECODERS = {name for name in DECODERS if name.split(".")[0] in ("base64", "binascii", "zlib", "gzip", "bz2", "lzma")} \
    | {"bytes.fromhex", "bytearray.fromhex"}


def _sites(tree: ast.Module, depth: int, budget: Budget) -> list[Site]:
    module = _Module(tree)
    evaluator = _Evaluator(module, budget)
    read: dict[str, bool | None] = {}     # decoded text -> is it code (None: not asked), charged once
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def kind(call: ast.Call) -> str | None:
        name = module.qualified(call.func)
        if _runner(name):
            return "runner"
        if name in OPAQUE:
            return "opaque"
        if name in DECODERS or (isinstance(call.func, ast.Attribute) and call.func.attr == "fromhex"):
            return "decoder"
        return None

    kinds = {id(node): kind(node) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    around = _enclosing(tree, kinds)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            what, outer = kinds[id(node)], around[id(node)]
            if what == "runner" and "runner" not in outer:
                found.append(_read(_decode_site(node, _runner(module.qualified(node.func)), evaluator, depth),
                                   budget, read))
            elif what == "opaque" and "runner" not in outer:
                name = module.qualified(node.func)
                found.append(Site(node.lineno, f"{name}(...)", None, OPAQUE[name], depth))
            elif what == "decoder" and not {"runner", "decoder"} & outer:
                site = _read(_decode_site(node, None, evaluator, depth), budget, read)
                # decoded data that is not code is not packing; data a binary-to-text decoder cannot
                # decode statically (read at run time: the notebook's attachments, a file) may be code
                # written to a module (float.fromhex, codecs' text encodings: honest code uses them)
                runtime = site.decoded is None and module.qualified(node.func) in RUNTIME_DECODERS
                if site.unread or runtime or site.decoded is not None and _is_code(site.decoded, read):
                    found.append(site)
            elif _computed_builtin(node, module):
                found.append(Site(node.lineno, "getattr(builtins, <computed>)", None,
                                  "a builtin looked up by a name computed at run time", depth))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and not {"runner", "decoder"} & around.get(id(node), frozenset()) \
                and ("def " in node.value or "class " in node.value):
            # Python in a plain literal, which the code may write to a module file and import
            # (no exec): a token comparison sees one string
            site = _read(Site(node.lineno, LITERAL, node.value, depth=depth), budget, read)
            if site.unread or site.decoded is not None and defines_code(site.decoded):
                found.append(site)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                and _runner(module.aliases.get(node.id, node.id)):
            parent = parents.get(id(node))
            aliased = isinstance(parent, ast.Assign) and all(isinstance(t, ast.Name) for t in parent.targets)
            if not (isinstance(parent, ast.Call) and parent.func is node) and not aliased:
                # handed around as a value (`f(exec, blob)`): cannot be followed statically
                found.append(Site(node.lineno, node.id, None, f"{node.id} used as a value", depth))
    return _distinct(found)


def _enclosing(tree: ast.Module, kinds: dict[int, str | None]) -> dict[int, frozenset]:
    """id(node) -> the kinds of the calls around it, in one walk down the tree (asking every
    call's ancestors was quadratic: 6.6 s of CPU for 200,000 characters of nested calls)."""
    around = {id(tree): frozenset()}
    for node in ast.walk(tree):                 # breadth first: a node before its children
        inner = around[id(node)]
        if kinds.get(id(node)):
            inner = inner | {kinds[id(node)]}
        for child in ast.iter_child_nodes(node):
            around[id(child)] = inner
    return around


def _distinct(sites: list[Site]) -> list[Site]:
    """One site per hidden text: `code = compile(...)` and `exec(code)` decode the same."""
    seen, kept = set(), []
    for site in sites:
        key = site.decoded if site.decoded is not None else (site.line, site.reason)
        if key not in seen:
            seen.add(key)
            kept.append(site)
    return kept


def _computed_builtin(call: ast.Call, module: _Module) -> bool:
    """getattr(builtins, <not a literal>): exec or eval under a name built at run time."""
    if module.qualified(call.func) != "getattr" or len(call.args) < 2 or _literal(call.args[1]):
        return False
    base = call.args[0]
    base_name = module.qualified(base.func if isinstance(base, ast.Call) else base)
    return base_name in BUILTIN_NAMESPACES


LITERAL = "a string literal holding Python code"
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def defines_code(text: str) -> bool:
    """Text that is Python defining a function or class (prose and data mentioning `def` are not)."""
    tree = _parse(text)
    return tree is not None and any(isinstance(node, _DEFINITIONS) for node in ast.walk(tree))


def _is_code(text: str, read: dict[str, bool | None]) -> bool:
    """Decoded text that is Python with at least one statement other than a bare value; `read`
    (the texts of this source, already charged) remembers the answer."""
    if read[text] is None:
        tree = _parse(text)
        read[text] = tree is not None and any(
            not (isinstance(s, ast.Expr) and isinstance(s.value, (ast.Constant, ast.Name))) for s in tree.body)
    return read[text]


def _read(site: Site, budget: Budget, read: dict[str, bool | None]) -> Site:
    """The site, its decoded text charged to the budget (once per text of a source) before anything
    parses it: a text that does not fit is left unread, and the site undecodable."""
    if site.decoded is not None and site.decoded not in read:
        try:
            budget.read(site.decoded)
            read[site.decoded] = None
        except OverBudget as exc:
            site.decoded, site.reason, site.unread = None, str(exc), True
    return site


def _decode_site(node: ast.Call, runner: str | None, evaluator: _Evaluator, depth: int) -> Site:
    evaluator.start()
    try:
        if evaluator.budget.spent:
            raise OverBudget(SPENT)
        if runner is None:
            value = evaluator.value(node)
        elif not node.args:
            raise Undecodable(f"{runner}() without a source")
        else:
            value = evaluator.value(node.args[0])
        if isinstance(value, (bytes, bytearray)):
            value = evaluator.text(value)
        if not isinstance(value, str):
            raise Undecodable(f"{runner or 'decoding'} of a {type(value).__name__}")
        return Site(node.lineno, evaluator.how(runner), value, "", depth)
    except Undecodable as exc:
        return Site(node.lineno, evaluator.how(runner), None, str(exc), depth, isinstance(exc, OverBudget))
    except Exception as exc:   # noqa: BLE001  (MemoryError, RecursionError: no bound foresaw it)
        return Site(node.lineno, evaluator.how(runner), None, f"evaluation fails: {type(exc).__name__}", depth)


def unpack(source: str, depth: int = 0, budget: Budget | None = None) -> Unpacked:
    """Every packing site of `source` and of the code it decodes to (nesting up to MAX_DEPTH).
    `budget`: what may still be decoded, shared by the calls that pass it (default: a Budget for
    this source)."""
    budget = budget if budget is not None else Budget()
    result = Unpacked()
    tree = _parse(source)
    if tree is None:
        return result
    for site in _sites(tree, depth, budget):
        result.sites.append(site)
        if site.decoded is not None:
            if depth + 1 > MAX_DEPTH:
                site.decoded, site.reason = None, f"packed more than {MAX_DEPTH} levels deep"
                continue
            result.sites += unpack(site.decoded, depth + 1, budget).sites
    return result
