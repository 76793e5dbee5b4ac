"""What a student who copies does to hide the copy from a token comparison: run it from an
encoded, compressed string."""

from __future__ import annotations

import base64
import bz2
import codecs
import lzma
import marshal
import zlib


def zlib_base64(source: str) -> str:
    blob = base64.b64encode(zlib.compress(source.encode())).decode()
    return f'import base64, zlib\nexec(zlib.decompress(base64.b64decode("{blob}")))\n'


def aliased_bz2_b85(source: str) -> str:
    blob = base64.b85encode(bz2.compress(source.encode())).decode()
    return ("from bz2 import decompress as unpack\nimport base64 as b\n"
            f"DATA = '{blob}'\nrun = exec\nrun(unpack(b.b85decode(DATA)).decode('utf-8'))\n")


def lzma_hex_compile(source: str) -> str:
    blob = lzma.compress(source.encode()).hex()
    return (f"code = compile(__import__('lzma').decompress(bytes.fromhex('{blob}')), '<x>', 'exec')\n"
            "exec(code)\n")


def rot13_reversed_getattr(source: str) -> str:
    blob = codecs.encode(source, "rot13")[::-1]
    return f"import builtins, codecs\ngetattr(builtins, 'exec')(codecs.decode({blob!r}[::-1], 'rot13'))\n"


def twice(source: str) -> str:
    """Packed, and the packing packed again."""
    return zlib_base64(zlib_base64(source))


def hidden_runner(source: str) -> str:
    """exec under a name built at run time; the decoders alone are still visible."""
    blob = base64.b64encode(zlib.compress(source.encode())).decode()
    return ("import base64, builtins, zlib\n"
            f"getattr(builtins, 'ex' + 'ec'.strip())(zlib.decompress(base64.b64decode('{blob}')))\n")


DECODABLE = {f.__name__: f for f in (zlib_base64, aliased_bz2_b85, lzma_hex_compile, rot13_reversed_getattr, twice,
                                     hidden_runner)}


def marshalled(source: str) -> str:
    blob = marshal.dumps(compile(source, "<copied>", "exec"))
    return f"import marshal\nexec(marshal.loads({blob!r}))\n"


def runtime_key(source: str) -> str:
    key = 0x5A
    blob = base64.b64encode(bytes(b ^ key for b in zlib.compress(source.encode()))).decode()
    return ("import base64, time, zlib\nKEY = 0x5A if time.time() > 0 else 0\n"
            f"exec(zlib.decompress(bytes(b ^ KEY for b in base64.b64decode('{blob}'))))\n")


def zlib_bomb(_source: str) -> str:
    blob = base64.b64encode(zlib.compress(b"#" * (64 << 20), 9)).decode()
    return f"import base64, zlib\nexec(zlib.decompress(base64.b64decode('{blob}')))\n"


UNDECODABLE = {f.__name__: f for f in (marshalled, runtime_key, zlib_bomb)}
