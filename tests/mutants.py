"""Buggy submissions made from the full-marks one by seeded, named mutations.

Each code mutation is one exact text replacement in the reference codesign.py (a bug students
really make: ties broken toward the smaller value, no saturation, the wrong block size, an
inverted ratio, ...); each answer mutation appends a notebook cell that overrides one report
answer with a wrong value derived from the answer key. `mutate_submission` applies a chosen set;
`mutant_class` draws a seeded class of them. A replacement that no longer matches the reference
raises, so the catalogue cannot silently go stale.
"""

import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat


@dataclass(frozen=True)
class CodeMutation:
    name: str
    function: str  # the graded function the bug lands in
    old: str
    new: str
    witness: str  # an expression (numpy as np, hw_specs' chips in scope) on which the bug shows


X64 = "np.random.default_rng(0).standard_t(5, 64) * 0.02"
CODE_MUTATIONS = (
    CodeMutation("e2m1_ties_to_smaller", "to_e2m1", "np.rint(a / step)", "np.ceil(a / step - 0.5)", "to_e2m1(0.75)"),
    CodeMutation("e2m1_positive_zero", "to_e2m1", "return np.copysign(q, y)", "return np.copysign(q, y) + 0.0", "to_e2m1(-0.2)"),
    CodeMutation("e2m1_no_saturation", "to_e2m1", "return np.copysign(q, y)", "return np.copysign(np.where(a > 6, a, q), y)", "to_e2m1(7.0)"),
    CodeMutation("e4m3_no_saturation", "round_e4m3", "np.copysign(np.minimum(q, E4M3_MAX), x)", "np.copysign(q, x)", "round_e4m3(500.0)"),
    CodeMutation("e4m3_ties_away", "round_e4m3", "np.rint(np.ldexp(a, -step_exp))", "np.floor(np.ldexp(a, -step_exp) + 0.5)", "round_e4m3(17.0)"),
    CodeMutation("wrong_block_size", "quantize", "block_size = SCHEMES[scheme]", 'block_size = {"mxfp4": 16, "nvfp4": 32}[scheme]', f"quantize({X64}, 'nvfp4')"),
    CodeMutation("ignores_block_size", "quantize", "return int(block_size), scale_format", "return SCHEMES[scheme], scale_format", f"quantize({X64}, 'nvfp4', block_size=32)"),
    CodeMutation("ignores_scale_format", "quantize", "return int(block_size), scale_format", "return int(block_size), SCALE_FORMATS[scheme]", f"quantize({X64}, 'mxfp4', scale_format='e4m3')"),
    CodeMutation("mxfp4_exponent_from_log2", "quantize", "_, k = np.frexp(bmax)", "k = np.floor(np.log2(np.where(bmax > 0, bmax, 1.0))).astype(int) + 1", "quantize(np.r_[8 * (1 - 2.0 ** -53), 1.0, np.zeros(30)], 'mxfp4')"),
    CodeMutation("mxfp4_scale_off_by_one", "quantize", "np.clip(k - 1 - 2, -127, 127)", "np.clip(k - 2, -127, 127)", f"quantize({X64}, 'mxfp4')"),
    CodeMutation("nvfp4_no_global_scale", "quantize", "g = amax / (E2M1_MAX * E4M3_MAX)", "g = 1.0", f"quantize({X64}, 'nvfp4')"),
    CodeMutation("quantize_accepts_2d", "quantize", "if x.ndim != 1:", "if x.ndim > 2:", "quantize(np.ones((4, 4)), 'fp8_tensor')"),
    CodeMutation("flops_per_exp_one_matmul", "flops_per_exp", "int(2 * d_qk + 2 * d_v)", "int(2 * d_qk)", "flops_per_exp(128, 128)"),
    CodeMutation("exp_ratio_inverted", "exp_ratio", "float(needed_exp_per_s / float(chip.exp_per_s))", "float(float(chip.exp_per_s) / needed_exp_per_s)", "exp_ratio(H100, 'bf16', 128, 128)"),
    CodeMutation("ridge_inverted", "ridge_point", "float(chip.peak_flops(precision) / float(chip.mem_bw))", "float(float(chip.mem_bw) / chip.peak_flops(precision))", "ridge_point(H100, 'fp8')"),
    CodeMutation("trend_compute_same_precision", "trend_row", "base.peak_flops(base_low)", "base.peak_flops(low_precision)", "trend_row(B300, 'nvfp4')"),
)
CODE_MUTATIONS_BY_NAME = {m.name: m for m in CODE_MUTATIONS}
ANSWER_PREFIX = "wrong_answer:"


def apply_code_mutation(source: str, mutation: CodeMutation) -> str:
    count = source.count(mutation.old)
    if count != 1:
        raise ValueError(f"mutation {mutation.name}: {mutation.old!r} occurs {count} times in the reference, expected once")
    return source.replace(mutation.old, mutation.new)


def wrong_answer(key):
    """A value the grader must reject: another letter for a choice, double the key for a number."""
    if isinstance(key, str):
        return "A" if key != "A" else "B"
    return 2 * key + 1


def override_answers(notebook: Path, answers: dict) -> None:
    """Append one code cell that rebinds the given answer variables (last write wins)."""
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("\n".join(f"{name} = {value!r}" for name, value in answers.items())))
    nbformat.write(nb, notebook)


def mutate_submission(reference: Path, dest: Path, mutations: tuple[str, ...], answer_key: dict | None = None) -> None:
    """Copy the full-marks submission `reference` to `dest` and apply the named mutations.

    Code mutations are names from CODE_MUTATIONS; `wrong_answer:<item id>` overrides that report
    answer (needs `answer_key`).
    """
    shutil.copytree(reference, dest)
    code = dest / "codesign.py"
    source = code.read_text(encoding="utf-8")
    wrong = {}
    for name in mutations:
        if name.startswith(ANSWER_PREFIX):
            item = name.removeprefix(ANSWER_PREFIX)
            if answer_key is None or item not in answer_key:
                raise ValueError(f"mutation {name}: no answer key for {item!r}")
            wrong[item] = wrong_answer(answer_key[item])
        elif name in CODE_MUTATIONS_BY_NAME:
            source = apply_code_mutation(source, CODE_MUTATIONS_BY_NAME[name])
        else:
            raise ValueError(f"unknown mutation {name!r}; expected one of {sorted(CODE_MUTATIONS_BY_NAME)} or {ANSWER_PREFIX}<item id>")
    code.write_text(source, encoding="utf-8")
    if wrong:
        override_answers(dest / "handout.ipynb", wrong)


def in_conflict(a: CodeMutation, b: CodeMutation) -> bool:
    """Both edit the same code: once one is applied, the other's text is gone."""
    return a.old in b.old or b.old in a.old


def draw_mutations(rng: random.Random, answer_ids: tuple[str, ...]) -> tuple[str, ...]:
    """One bug in the code, plus up to two more bugs in the code or the answers, drawn with `rng`;
    never two code bugs that edit the same code."""
    first = rng.choice(CODE_MUTATIONS)
    chosen = [first.name]
    code = [first]
    for _ in range(rng.randint(0, 2)):
        pool = [m.name for m in CODE_MUTATIONS if m.name not in chosen and not any(in_conflict(m, c) for c in code)]
        pool += [ANSWER_PREFIX + item for item in answer_ids if ANSWER_PREFIX + item not in chosen]
        name = rng.choice(pool)
        chosen.append(name)
        code += [CODE_MUTATIONS_BY_NAME[name]] if name in CODE_MUTATIONS_BY_NAME else []
    return tuple(sorted(chosen))


def mutant_class(reference: Path, dest: Path, count: int, *, seed: int = 0, answer_key: dict | None = None) -> dict[str, tuple[str, ...]]:
    """`count` student folders under `dest`: the reference itself, then seeded mutants.

    Returns student name -> the mutations applied (empty for the reference).
    """
    rng = random.Random(seed)
    answer_ids = tuple(sorted(answer_key)) if answer_key else ()
    roster = {}
    for index in range(count):
        mutations = () if index == 0 else draw_mutations(rng, answer_ids)
        student = f"s{index:03d}"
        mutate_submission(reference, dest / student, mutations, answer_key)
        roster[student] = mutations
    return roster
