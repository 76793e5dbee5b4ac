"""Keys of the end-to-end lab's follow-ups (q35g, q34h): how many times the measured ratio of a
format's end effect to FP8's is the student's own predicted ratio (q35p, q34r: from the tile
errors alone, so a quantize too slow for the whole model still answers them). The measurement is the reference pipeline's (one model, one set of
sentences: the same for everyone); the prediction is the student's answer, so a wrong prediction
costs its own item only, not the follow-up that compares with it (DerivedKey)."""

from __future__ import annotations

from autograder.engine.answer_checks import DerivedKey

# follow-up -> (its prediction item, the END_FORMATS entry it measures)
FOLLOW_UPS = {
    "q35g_fp4_end_vs_prediction": ("q35p_fp4_end_prediction", "fp4_tensor"),
    "q34h_h16_end_vs_prediction": ("q34r_h16_end_prediction", "nvfp4 + H16"),
}


def follow_up_keys() -> dict[str, DerivedKey]:
    from solutions.lec01_codesign.answers import end_to_end

    def measured_over(name: str):
        measured = end_to_end()[name]["deficit"] / end_to_end()["fp8_tensor"]["deficit"]
        return lambda predicted: measured / predicted

    return {item: DerivedKey((prediction,), measured_over(name)) for item, (prediction, name) in FOLLOW_UPS.items()}
