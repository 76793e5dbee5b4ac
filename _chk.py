import numpy as np, tomllib, collections
from solutions.lec01_codesign import variants
from solutions.lec01_codesign.answers import answer_key, real_tensor_errors, ablation_errors, demo2_data
raw = tomllib.loads(open("assignments/lec01_codesign/grading.toml").read())
pl = {i["id"]: i["plausible"] for i in raw["items"] if "plausible" in i}
ch = collections.defaultdict(collections.Counter)
bad = []
q11gt = 0
for i in range(300):
    p = variants.variant(np.random.default_rng(10_000 + i))
    k = answer_key(p)
    for item, v in k.items():
        if isinstance(v, str): ch[item][v] += 1
        elif not (pl[item][0] <= v <= pl[item][1]): bad.append((item, v))
    q11gt += k["q11_scale_format_gain"] > k["q12_block_size_gain"]
    if k["q16_software_exp_share"] <= 0: bad.append(("q16", 0))
print(dict(ch)); print(bad[:10], len(bad)); print("q11>q12", q11gt)
