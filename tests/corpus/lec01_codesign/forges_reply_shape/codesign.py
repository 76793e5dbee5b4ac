# Sends the grader a hand-made reply (found through the worker's frames): an empty array
# whose shape no numpy array can have. The grader must call it malformed, not fail itself.
import sys, os

def _forge(shape, dtype="<f8"):
    f = sys._getframe(1)
    server = spec = None
    while f is not None:
        loc = f.f_locals
        if spec is None and isinstance(loc.get("spec"), dict):
            spec = loc["spec"]
        if server is None and hasattr(loc.get("self"), "send_frame"):
            server = loc["self"]
        f = f.f_back
    codec = server.codec
    node = {"~": "ndarray", "dtype": dtype, "shape": shape, "offset": 0, "nbytes": 0}
    enc = codec.Encoder(1 << 20)
    server.end_marker(spec["id"])
    server.send_frame(enc.frame({"id": spec["id"], "status": "ok", "value": node}))
    os._exit(0)

def round_e4m3(x):
    _forge([0, 2**63])
