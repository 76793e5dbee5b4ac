"""The wire format: what a (hostile) worker can send is decoded into plain data or refused."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

from autograder.sandbox.codec import (Rebuilt, MAGIC, MAX_HEADER_BYTES, PREFIX, Decoder, Encoder, ResultTooLarge,
                                      Unsupported, WireError, parse_header, parse_prefix)


def round_trip(value, *, max_bytes=1 << 26, rebuild=None):
    encoder = Encoder(max_bytes)
    data = encoder.frame({"value": encoder.value(value)})
    head_len, body_len = parse_prefix(data[:PREFIX.size], max_bytes)
    header = parse_header(data[PREFIX.size:PREFIX.size + head_len])
    return Decoder(data[PREFIX.size + head_len:], rebuild=rebuild).value(header["value"])


@pytest.mark.parametrize("value", [
    None, True, False, 0, -7, 2**70, 1.5, float("inf"), "ünïcode ✓", [1, [2.5, None]],
    (1, "a"), {"compute": 7.6, "fp8": None, 3: [1, 2]}, {("a", 1): 2.0},
])
def test_plain_values_round_trip_exactly(value):
    """Do plain Python values come back equal and of the same type?"""
    back = round_trip(value)
    assert back == value and type(back) is type(value)


def test_nan_round_trips():
    assert np.isnan(round_trip(float("nan")))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int8", "int64", "uint16",
                                   "bool", "complex128", "<U3"])
def test_arrays_round_trip_with_dtype_and_shape(dtype):
    """Does an array keep its dtype, shape and every bit of its values?"""
    arr = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    back = round_trip(arr)
    assert back.dtype == arr.dtype and back.shape == arr.shape
    np.testing.assert_array_equal(back, arr)


def test_non_contiguous_and_big_endian_arrays_are_normalised():
    arr = np.arange(20, dtype=">f8").reshape(4, 5)[:, ::2]
    back = round_trip(arr)
    assert back.dtype == np.dtype("<f8")
    np.testing.assert_array_equal(back, arr)


def test_numpy_scalars_come_back_as_numpy_scalars():
    back = round_trip([np.float32(0.1), np.int64(3), np.bool_(True)])
    assert [type(x) for x in back] == [np.float32, np.int64, np.bool_]
    assert back[0] == np.float32(0.1)


def test_subclasses_of_containers_become_plain_containers():
    """A student's OrderedDict or namedtuple is fine; what arrives is a dict / tuple."""
    point = namedtuple("Point", "x y")(1, 2)
    back = round_trip({"a": OrderedDict(b=1), "p": point})
    assert back == {"a": {"b": 1}, "p": (1, 2)}
    assert type(back["a"]) is dict and type(back["p"]) is tuple


@pytest.mark.parametrize("value, type_name", [
    (np.array([1, "a", None], dtype=object), "ndarray[object]"),
    (lambda x: x, "function"),
    ({1, 2}, "set"),
    (b"raw", "bytes"),
    (np.zeros(2, dtype=[("a", "f4")]), "ndarray"),
])
def test_unsupported_types_become_a_marker(value, type_name):
    """Object arrays, functions, ... arrive as an Unsupported marker the engine can report."""
    back = round_trip([value])[0]
    assert isinstance(back, Unsupported)
    assert back.type_name.startswith(type_name)
    assert str(back).startswith("unsupported type ")


def test_float_subclass_with_lying_eq_is_not_passed_through():
    class Always(float):
        def __eq__(self, other):
            return True
    back = round_trip(Always(1.0))
    assert isinstance(back, Unsupported)


def test_oversized_value_is_refused_with_a_message():
    with pytest.raises(ResultTooLarge, match="limit"):
        round_trip(np.zeros(1000), max_bytes=4000)


def test_value_or_unsupported_replaces_only_the_oversized_part():
    encoder = Encoder(10_000)
    small = encoder.value_or_unsupported(np.ones(10))
    big = encoder.value_or_unsupported(np.ones(5000))
    data = encoder.frame({"small": small, "big": big})
    head_len, _ = parse_prefix(data[:PREFIX.size], 10_000)
    header = parse_header(data[PREFIX.size:PREFIX.size + head_len])
    decoder = Decoder(data[PREFIX.size + head_len:])
    np.testing.assert_array_equal(decoder.value(header["small"]), np.ones(10))
    assert "limit" in decoder.value(header["big"]).reason


def test_deep_nesting_is_cut_off():
    value = []
    for _ in range(200):
        value = [value]
    back = round_trip(value)
    depth = 0
    while isinstance(back, list):
        back, depth = back[0], depth + 1
    assert isinstance(back, Unsupported) and depth < 100


def test_strict_encoder_refuses_unknown_argument_types():
    """The parent must not silently send a marker where it meant an argument."""
    with pytest.raises(ValueError, match="cannot send"):
        Encoder(1 << 20, strict=True).value(object())


def test_rebuilt_args_are_rebuilt_by_the_receiver_only():
    data = {"name": "X", "sizes": [1, 2]}
    built = round_trip(Rebuilt("shapes:Box.from_dict", data), rebuild=lambda f, d: (f, d["name"]))
    assert built == ("shapes:Box.from_dict", "X")
    with pytest.raises(WireError, match="tag"):
        round_trip(Rebuilt("shapes:Box.from_dict", data))  # the parent's decoder rebuilds nothing


def test_only_declared_factories_are_sent():
    encoder = Encoder(1 << 20, strict=True, factories=("shapes:Box.from_dict",))
    encoder.value(Rebuilt("shapes:Box.from_dict", {}))
    with pytest.raises(ValueError, match="not declared"):
        encoder.value(Rebuilt("os:system", "true"))
    with pytest.raises(ValueError, match="must look like"):
        encoder.value(Rebuilt("shapes.Box", {}))


# --- hostile frames ---------------------------------------------------------------------------
def test_bad_magic_and_oversized_frames_are_refused():
    with pytest.raises(WireError, match="magic"):
        parse_prefix(PREFIX.pack(b"PKL\x80", 10, 0), 1000)
    with pytest.raises(WireError, match="exceeds"):
        parse_prefix(PREFIX.pack(MAGIC, 10, 10**12), 1 << 20)


def test_header_must_be_a_json_object():
    with pytest.raises(WireError):
        parse_header(b"\x80\x04\x95")  # a pickle prefix is not JSON
    with pytest.raises(WireError):
        parse_header(b"[1, 2]")
    with pytest.raises(WireError):
        parse_header(b"[" * 100_000)


@pytest.mark.parametrize("node", [
    {"~": "ndarray", "dtype": "|O", "shape": [1], "offset": 0, "nbytes": 8},
    {"~": "ndarray", "dtype": "|V8", "shape": [1], "offset": 0, "nbytes": 8},
    {"~": "ndarray", "dtype": "<f8", "shape": [2], "offset": 0, "nbytes": 8},
    {"~": "ndarray", "dtype": "<f8", "shape": [1], "offset": 4, "nbytes": 8},
    {"~": "ndarray", "dtype": "<f8", "shape": [-1], "offset": 0, "nbytes": 8},
    {"~": "ndarray", "dtype": "<f8", "shape": [1], "offset": True, "nbytes": 8},
    {"~": "pickle", "data": "gASV"},
    {"~": "dict", "items": [[[1], 2]]},
    {"~": "scalar", "dtype": "<f8", "shape": [1], "offset": 0, "nbytes": 8},
    # Empty buffers whose shape numpy cannot make (a forged reply): WireError, not numpy's ValueError.
    {"~": "ndarray", "dtype": "<f8", "shape": [0, 2**63], "offset": 0, "nbytes": 0},
    {"~": "ndarray", "dtype": "<f8", "shape": [0] + [2**31] * 31, "offset": 0, "nbytes": 0},
    {"~": "ndarray", "dtype": "<U0", "shape": [3], "offset": 0, "nbytes": 0},
    {"~": "scalar", "dtype": "|S0", "shape": [], "offset": 0, "nbytes": 0},
])
def test_malformed_nodes_are_refused(node):
    with pytest.raises(WireError):
        Decoder(b"\x00" * 8).value(node)


def test_decoded_arrays_do_not_alias_the_message_and_booleans_are_sanitised():
    body = bytes([0, 1, 7])
    back = Decoder(body).value({"~": "ndarray", "dtype": "|b1", "shape": [3], "offset": 0, "nbytes": 3})
    assert back.tolist() == [False, True, True]
    assert back.view(np.uint8).tolist() == [0, 1, 1]
    assert back.flags.writeable


def test_a_huge_json_header_is_refused_before_parsing():
    """json.loads of a giant header could eat the parent's memory; the length is checked first."""
    with pytest.raises(WireError, match="header"):
        parse_prefix(PREFIX.pack(MAGIC, MAX_HEADER_BYTES + 1, 0), 1 << 30)
    with pytest.raises(ResultTooLarge, match="numpy array"):
        round_trip(["x" * 100] * (MAX_HEADER_BYTES // 100), max_bytes=1 << 30)


def test_a_buffer_named_by_more_than_one_node_is_refused():
    """Every array of a frame has its own bytes in the body: a frame whose nodes all name the same
    buffer would make the receiver copy it once per node (a small reply, a huge value)."""
    encoder = Encoder(1 << 26)
    node = encoder.value(np.zeros(1024))
    data = encoder.frame({"value": [node, node]})
    head_len, _ = parse_prefix(data[:PREFIX.size], 1 << 26)
    header = parse_header(data[PREFIX.size:PREFIX.size + head_len])
    with pytest.raises(WireError, match="more bytes"):
        Decoder(data[PREFIX.size + head_len:]).value(header["value"])
    overlapping = dict(node, offset=8, nbytes=8 * 1000)  # overlaps the first array's buffer
    overlapping["shape"] = [1000]
    with pytest.raises(WireError, match="more bytes"):
        Decoder(data[PREFIX.size + head_len:]).value([node, overlapping])


def test_the_decoder_reads_each_body_once_across_values():
    """A notebook's variables are decoded one by one from one body: the bound holds across them."""
    encoder = Encoder(1 << 26)
    node = encoder.value(np.arange(16.0))
    data = encoder.frame({"value": node})
    head_len, _ = parse_prefix(data[:PREFIX.size], 1 << 26)
    decoder = Decoder(data[PREFIX.size + head_len:])
    assert list(decoder.value(node)) == list(np.arange(16.0))
    with pytest.raises(WireError, match="more bytes"):
        decoder.value(node)
