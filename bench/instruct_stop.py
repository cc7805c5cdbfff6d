"""The LoRA filler's beam search, stopped once it is hopeless: same beams, less time?

``InstructFiller._generate`` stops beam search once every candidate beam has left the
masked input for good and no beam has ended valid (``instruct._Hopeless``): the sentence
would go to the infill filler either way. This measures, on the same sentences, in the
same run, the generation with that stop (ours) against the generation run to its end
(reference: the stop replaced by one that never fires):

* whether the beams that pass ``validate`` are the same, sentence by sentence (they must be);
* how many searches stopped early;
* the time, and its ratio to the reference.

Sentences: the demo sentence of bench/app_latency.py, and entityTagger's masks of
bench/fill_quality.py's two sets (news sentences with entities; template sentences with
two or more names or places of one type).

Run:  python bench/instruct_stop.py [--sentences 20] [--threads 2]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

DEMO = ("Maria Kowalski flew from Chicago to Lagos last week to meet Chidi Okonkwo, who works for Shell "
        "and lives with his sister Ngozi in Abuja.")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    import fill_quality as fq

    import recover_core.filling.instruct as instruct
    from recover_core.filling import MaskInput, get_filler
    from recover_core.filling.base import merge_consecutive
    from recover_core.masking import build, mask_many

    class Never(instruct._Hopeless):
        def __call__(self, input_ids, scores=None, **kwargs):
            return torch.zeros(input_ids.shape[0], dtype=torch.bool)

    ours = instruct._Hopeless
    masker = build("entityTagger")
    filler = get_filler("instruct", None)
    sets = {"demo": mask_many([DEMO], masker, "mask"),
            "news": fq.news_sentences(args.sentences, masker),
            "multi": mask_many(fq.multi_sentences(args.sentences), masker, "class")}
    filler._generate(sets["demo"][0].masked, filler.beams)  # warm
    print(f"{'set':6} {'sentences':>9} {'same valid beams':>17} {'stopped early':>14} "
          f"{'ours s':>8} {'reference s':>12} {'ratio':>6}")
    for name, sample in sets.items():
        t_ours = t_ref = 0.0
        same = stopped = 0
        for m in sample:
            item = merge_consecutive(MaskInput(m.masked, m.markers))
            runs = []
            for stop in (ours, Never):
                instruct._Hopeless = stop
                filler.stats.clear()
                t = time.perf_counter()
                beams = filler._generate(m.masked, filler.beams, item)
                runs.append((time.perf_counter() - t, filler.stats["stopped_hopeless"],
                             [(o, round(s, 3)) for o, s in beams if instruct.validate(item, o) is not None]))
            instruct._Hopeless = ours
            (a, fired, va), (b, _, vb) = runs
            t_ours, t_ref = t_ours + a, t_ref + b
            stopped += fired
            same += va == vb
            if va != vb:
                print(f"  DIFFERENT valid beams: {m.masked}\n    ours {va}\n    reference {vb}")
        print(f"{name:6} {len(sample):>9} {same:>17} {stopped:>14} {t_ours:>8.1f} {t_ref:>12.1f} "
              f"{t_ours / t_ref:>6.2f}")


if __name__ == "__main__":
    main()
