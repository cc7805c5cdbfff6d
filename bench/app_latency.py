"""Live demo latency (issues 12, 59, 77): "Mask and fill" as users see it, through gradio_client.

The app is started as a user starts it (`python app.py` on 127.0.0.1 only), then driven over
its API, streamed (generators: the masked sentence at once, the engine's answer, then each
column as it is done). For one 25-word news-style sentence with several entities:

* one user      one click of "Mask and fill" as the page makes it (/fill_mlm: the masks, the
                engine's answer and the MLM columns, in their own queue; then /fill_causal:
                the four causal ones): the time to the first update (the masked sentence),
                to the engine's answer, to the first finished column and to all six, p50
                over --repeats requests (each with its own seed, so nothing is reused);
* N users       N clients submit at the same moment (idle otherwise); the time at which the
                last one has its first update and all six columns (the last done).

Reference, measured in the same run: the previous, non-streaming form of one click, the
engine's answer and the six columns computed one after another in this process with
``explore`` (warm, same sentence and seeds), shown only when all is done: a user of it
waited that long for anything. Ratios: each app p50 / that reference, and each figure /
its goal (issue 77: first update <= 0.5 s p50, all six <= 5 s p50, 4 users' last <= 12 s).

``--threads``: the models thread sized by the load (``threads.threads_for``, now) against
every core whatever the load (before), one request each in turn, in this process through
``threads.serve``/``run`` as app.py runs it; ratio new/old per round and of the p50s.

``--kernels``: the causal fillers' products on PyTorch's linear (MKL) against oneDNN on
packed weights (``filling/kernels.py``), in turn, in this process: one click's six columns
each way, per round, and which one the load-time timing picked.

``--floor``: what no faster kernel can remove, in this process. One click's causal columns
are counted in forward passes of SmolLM2-135M; each pass waits on the one before it (a mask's
candidates come from the Top-1 word before it, a beam's next token from its last one). Each
pass must read the 540 MB of float32 weights at least once and do its rows' products, so it
takes at least the longer of two times measured here: reading that many bytes (a sum over a
tensor of that size) and its rows' multiply-adds at the best rate a large product reaches on
this machine. Their sum over the passes is the floor no kernel, thread count or runtime can
beat with these passes and these weights; against the 3 s goal. A one-row pass as it runs
now is timed too.

``--first-only``: the first step alone, one user, through gradio_client and as the page's
event stream delivers it (``page_stream``: gradio_client polls its message queue every 50
ms; the browser does not).

``--floor`` also says which CPU options were applied here (``cpu_options``): torch threads, the
ISA, AMX and oneDNN offered, each causal filler's kernel and whether its passes are shared.

Run:  python bench/app_latency.py [--repeats 5] [--users 4] [--no-reference]
      python bench/app_latency.py --first-only|--browser|--threads|--kernels|--floor [--repeats 3]
Shared passes between users, words compared: bench/shared_passes.py.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

SENTENCE = ("Maria Kowalski flew from Chicago to Lagos last week to meet Chidi Okonkwo, who works for Shell "
            "and lives with his sister Ngozi in Abuja.")
GOALS = {"update": 0.5, "first": 0.5, "all": 5.0, "users_all": 12.0}  # issue 77


HEAD = 4  # /fill_mlm's outputs before the columns: the engine's answer (text, note), the masks, the status


def one_request(url: str, seed: int, mlm_only: bool = False, protect: str = "direct") -> dict:
    """Seconds to the first update, the engine's answer, the first column and all six for one
    click (/fill_mlm, then /fill_causal), each update timed as the client's job hands it over."""
    from gradio_client import Client

    import app
    from recover_core.explorer import sentence as explore

    client = Client(url, verbose=False)
    args = (SENTENCE, "entityTagger", 10000, "mask", 10, seed, explore.default_model("mlm"),
            explore.default_model("infill"), explore.default_model("instruct"), protect)
    t0 = time.perf_counter()
    at: dict[str, float] = {}
    job = client.submit(*args, api_name="/fill_mlm")
    seen = 0
    while True:
        done = job.done()
        outs = job.outputs()
        for out in outs[seen:]:
            now = time.perf_counter() - t0
            at.setdefault("update", now)
            if out[0] and any(t.get("token") for t in out[0]):
                at.setdefault("answer", now)
            if any("waiting" not in str(out[HEAD + 3 * j + 1]) for j in range(len(app.MLM_COLUMNS))):
                at.setdefault("first", now)
        seen = len(outs)
        if done:
            break
        time.sleep(0.005)
    job.result()  # raises the app's message if the step failed
    if mlm_only:
        return at | {"all": time.perf_counter() - t0}
    out = client.predict(*args, api_name="/fill_causal")
    total = time.perf_counter() - t0
    waiting = [h for h in (out[1 + 3 * j + 1] for j in range(len(app.CAUSAL_COLUMNS))) if "waiting" in str(h)]
    if waiting or {"update", "answer", "first"} - set(at):
        raise RuntimeError(f"not every output arrived: {waiting}, {sorted(at)}")
    return at | {"all": total}


def page_stream(url: str, seed: int, session: str | None = None) -> dict:
    """The first step (/fill_mlm) as the page receives it (its event stream, no gradio_client,
    which polls its queue every 50 ms): seconds to the first MLM column and to both.
    ``session``: the page's (a new one when not given: a first click after loading the page,
    when Gradio builds the session's state, about 44 ms for this app's 141 blocks)."""
    import json
    import uuid

    import httpx
    from gradio_client import Client
    from gradio_client.utils import apply_diff

    import app
    from recover_core.explorer import sentence as explore

    fn = Client(url, verbose=False)._infer_fn_index("/fill_mlm", None)
    data = [SENTENCE, "entityTagger", 10000, "mask", 10, seed, explore.default_model("mlm"),
            explore.default_model("infill"), explore.default_model("instruct")]
    session = session or uuid.uuid4().hex
    outputs, first = None, None
    with httpx.Client(timeout=None) as http:
        t0 = time.perf_counter()
        http.post(url + "gradio_api/queue/join", json={"data": data, "event_data": None, "fn_index": fn,
                                                       "trigger_id": None, "session_hash": session}).raise_for_status()
        with http.stream("GET", url + "gradio_api/queue/data", params={"session_hash": session}) as stream:
            for line in stream.iter_lines():
                if not line.startswith("data:"):
                    continue
                msg = json.loads(line[5:])
                if msg.get("msg") == "process_generating":  # the first yield whole, then diffs
                    new = msg["output"]["data"]
                    outputs = new if outputs is None else [apply_diff(o, d) for o, d in zip(outputs, new)]
                    headers = [outputs[HEAD + 3 * j + 1] for j in range(len(app.MLM_COLUMNS))]
                    if first is None and any("waiting" not in str(h) for h in headers):
                        first = time.perf_counter() - t0
                elif msg.get("msg") == "process_completed":
                    if not msg.get("success", True) or first is None:
                        raise RuntimeError(f"/fill_mlm failed: {str(msg)[:300]}")
                    return {"first": first, "all": time.perf_counter() - t0}
    raise RuntimeError("the event stream ended before /fill_mlm completed")


FIRST_COLUMN_JS = """() => new Promise((resolve, reject) => {
  const button = [...document.querySelectorAll('button')].find(b => b.textContent.trim() === 'Mask and fill');
  let waiting = false;
  const t0 = performance.now();
  const seen = new MutationObserver(() => {
    const text = document.body.textContent;
    waiting = waiting || text.includes('MLM · Top-1 · waiting');
    if (waiting && text.includes('MLM · Top-1 · minilm-mlm')) { seen.disconnect(); resolve(performance.now() - t0); }
  });
  seen.observe(document.body, {subtree: true, childList: true, characterData: true});
  button.click();
  setTimeout(() => { seen.disconnect(); reject(new Error('no first column within 60 s')); }, 60000);
})"""


def in_browser(url: str, clicks: int) -> list[float]:
    """Seconds from the click on "Mask and fill" to the first MLM column drawn, in Debian's
    Chromium (as tests/test_browser.py drives it), timed in the page (``FIRST_COLUMN_JS``):
    a user's first click on a freshly loaded page, ``clicks`` pages."""
    from playwright.sync_api import sync_playwright

    from test_browser import ARGS, CHROMIUM

    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        for n in range(clicks):
            page = browser.new_page()
            page.goto(url)
            page.wait_for_timeout(2000)  # a user reads the page before typing
            page.get_by_label("Sentence").fill(SENTENCE)
            out.append(page.evaluate(FIRST_COLUMN_JS) / 1000)
            page.get_by_text("LoRA-tuned LLM · Top-K · smollm2-fill").wait_for(timeout=300_000)  # the click is over
            page.close()
        browser.close()
    return out


def reference(seeds: list[int]) -> float:
    """The previous, non-streaming click: the engine's answer and the six columns one after
    another, in this process, warm, shown when all is done: seconds, p50."""
    from recover_core.explorer import sentence as explore

    m = explore.mask(SENTENCE, "entityTagger", 10000, "mask")
    for col in explore.COLUMNS:  # warm every model once
        explore.fill(m, col, explore.default_model(col.kind), 10, 0, "entityTagger", 10000)
    times = []
    for s in seeds:
        t0 = time.perf_counter()
        explore.obfuscated(SENTENCE, "entityTagger", 10000, "mask")
        for col in explore.COLUMNS:
            explore.fill(explore.mask(SENTENCE, "entityTagger", 10000, "mask"), col,
                         explore.default_model(col.kind), 10, s, "entityTagger", 10000)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def threads_ratio(repeats: int) -> None:
    """The demo request (MLM columns, then the causal ones on the models thread) with the
    models thread's count chosen by the load (new) and fixed at every core (old), in turn."""
    import os

    import app
    from recover_core.models import bundles
    from recover_core.explorer import sentence as explore
    from recover_core.runtime import threads

    threads.serve()
    models = {k: explore.default_model(k) for k in ("mlm", "infill", "instruct")}
    by_load = threads.threads_for

    @threads.on_models_thread
    def causal(seed: int):
        yield from explore.fill_steps(SENTENCE, "entityTagger", 10000, "mask", 10, seed, models, app.CAUSAL_COLUMNS)

    def request(seed: int) -> float:
        t0 = time.perf_counter()
        for _ in explore.fill_steps(SENTENCE, "entityTagger", 10000, "mask", 10, seed, models, app.MLM_COLUMNS):
            pass
        bundles.forget_request_state()
        for _ in causal(seed):
            pass
        bundles.forget_request_state()
        return time.perf_counter() - t0

    request(0)  # loads every model
    times: dict[str, list[float]] = {"new": [], "old": []}
    for r in range(repeats):
        for mode in ("new", "old"):
            threads.threads_for = by_load if mode == "new" else (lambda cores, load=None: cores)
            load = os.getloadavg()[0]
            times[mode].append(request(1 + 2 * r + (mode == "old")))
            print(f"round {r + 1} {mode}: all six {times[mode][-1]:.2f} s (models thread: "
                  f"{threads.threads_for(threads._cores)} torch threads; 1-min load {load:.1f})", flush=True)
        print(f"round {r + 1} ratio new/old {times['new'][-1] / times['old'][-1]:.2f}", flush=True)
    threads.threads_for = by_load
    new, old = statistics.median(times["new"]), statistics.median(times["old"])
    print(f"p50 all six: new {new:.2f} s, old {old:.2f} s, ratio {new / old:.2f}")


def kernels_ratio(repeats: int) -> None:
    """One click's six columns with the causal fillers' products on MKL and on oneDNN, in turn."""
    import torch

    import app
    from recover_core.models import bundles
    from recover_core.explorer import sentence as explore
    from recover_core.filling import get_filler

    models = {k: explore.default_model(k) for k in ("mlm", "infill", "instruct")}

    def request(seed: int) -> float:
        t0 = time.perf_counter()
        for which in (app.MLM_COLUMNS, app.CAUSAL_COLUMNS):
            for _ in explore.fill_steps(SENTENCE, "entityTagger", 10000, "mask", 10, seed, models, which):
                pass
            bundles.forget_request_state()
        return time.perf_counter() - t0

    request(0)  # loads every model; each filler times both kernels once
    fillers = [get_filler(k, models[k]) for k in ("infill", "instruct")]
    print("picked at load:", "; ".join(f"{f.name}: {f.forward_path}" for f in fillers))
    linears = [m for f in fillers for m in f.model.modules() if isinstance(m, torch.nn.Linear)]
    packed = {id(m): m.__dict__.get("forward") for m in linears}
    if not any(packed.values()):
        print("oneDNN was not picked (or is not available): nothing to compare")
        return
    times: dict[str, list[float]] = {"MKL": [], "oneDNN": []}
    for r in range(repeats):
        for name in times:
            for m in linears:
                if name == "oneDNN" and packed[id(m)] is not None:
                    m.forward = packed[id(m)]
                else:
                    m.__dict__.pop("forward", None)
            times[name].append(request(1 + r))
        print(f"round {r + 1}: all six on MKL {times['MKL'][-1]:.2f} s, on oneDNN {times['oneDNN'][-1]:.2f} s, "
              f"ratio {times['oneDNN'][-1] / times['MKL'][-1]:.2f}", flush=True)
    mkl, dnn = statistics.median(times["MKL"]), statistics.median(times["oneDNN"])
    print(f"p50 all six: MKL {mkl:.2f} s, oneDNN {dnn:.2f} s, ratio {dnn / mkl:.2f}")


def _timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def cpu_options(fillers) -> str:
    """The CPU options applied here and offered: torch's threads, its ISA (AVX2, AVX-512, AMX),
    oneDNN, each causal filler's kernel (``filling/kernels.py``) and shared passes."""
    import torch

    from recover_core.filling import kernels

    flags = set()
    with contextlib.suppress(OSError):
        flags = set(Path("/proc/cpuinfo").read_text().split())
    amx = sorted(f for f in flags if f.startswith("amx"))
    lines = [f"CPU options: {os.cpu_count()} cores, torch {torch.__version__} with {torch.get_num_threads()} "
             f"threads here (the app's models thread sizes its own: threads.threads_for); ISA torch uses "
             f"{torch.backends.cpu.get_cpu_capability()}; AMX {'offered: ' + ','.join(amx) if amx else 'not offered'}"
             f"; oneDNN {'available' if kernels.onednn_available() else 'not available'}"]
    for f in fillers:
        shared = getattr(f.model.__dict__.get("forward"), "_shared_passes", None)
        lines.append(f"  {f.name}: products on {getattr(f, 'forward_path', 'torch linear (unrecorded)')}; inference_mode;"
                     f" {'passes shared between users' if shared else 'passes not shared'} (filling/scheduler.py)")
    return "\n".join(lines)


def pass_floor(repeats: int) -> None:
    """One click's causal columns: forward passes counted per filler, and the floor they set."""
    import copy

    import torch

    import app
    from recover_core.models import bundles
    from recover_core.explorer import sentence as explore
    from recover_core.filling import get_filler

    models = {k: explore.default_model(k) for k in ("mlm", "infill", "instruct")}

    def click(seed: int) -> float:
        t0 = time.perf_counter()
        for _ in explore.fill_steps(SENTENCE, "entityTagger", 10000, "mask", 10, seed, models, app.CAUSAL_COLUMNS):
            pass
        bundles.forget_request_state()
        return time.perf_counter() - t0

    click(0)  # loads both causal fillers
    fillers = {k: get_filler(k, models[k]) for k in ("infill", "instruct")}
    print(cpu_options(fillers.values()))
    passes = {k: 0 for k in fillers}
    rows_tokens = {k: 0 for k in fillers}
    sizes: list[tuple[int, int]] = []  # each pass, both fillers: (real row-tokens, rows the head must score)
    originals = [f.model.forward for f in fillers.values()]
    for name, f in fillers.items():
        forward = f.model.forward

        def counted(*a, _name=name, _forward=forward, **kw):
            ids = kw.get("input_ids", a[0] if a else None)
            passes[_name] += 1
            rows_tokens[_name] += ids.numel()
            # Padding need not be computed, nor logits a pass does not keep: the floor counts neither.
            mask = kw.get("attention_mask")
            real = int(mask[:, -ids.shape[1]:].sum()) if mask is not None else ids.numel()
            sizes.append((real, ids.shape[0] if kw.get("logits_to_keep") == 1 else real))
            return _forward(*a, **kw)

        f.model.forward = counted
    clicks = [click(1 + r) for r in range(repeats)]
    for f, forward in zip(fillers.values(), originals):
        f.model.forward = forward  # the shared-passes wrapper again (filling/scheduler.py)
    n = {k: v // repeats for k, v in passes.items()}
    model = fillers["infill"].model
    with torch.inference_mode():
        past = model(input_ids=torch.arange(1000, 1021)[None], use_cache=True).past_key_values
        one = []
        for _ in range(10):
            cache = copy.deepcopy(past)
            t0 = time.perf_counter()
            model(input_ids=torch.tensor([[1050]]), past_key_values=cache, use_cache=True)
            one.append(time.perf_counter() - t0)
    one_pass = statistics.median(one)
    # Reading the weights once, as fast as this machine reads memory: a sum over a tensor of
    # the same size. No kernel makes a one-row pass cheaper than this.
    weights = torch.empty(sum(p.numel() for p in model.parameters()), dtype=torch.float32).fill_(1.0)
    read = []
    for _ in range(10):
        t0 = time.perf_counter()
        weights.sum()
        read.append(time.perf_counter() - t0)
    stream = statistics.median(read)
    # The best multiply-add rate: a product as wide as the model's MLP, 2048 rows, best of 20.
    a, b = torch.randn(2048, 576), torch.randn(576, 1536)
    gemm = min(_timed(lambda: a @ b) for _ in range(20))
    flops = 2 * 2048 * 576 * 1536 / gemm
    head = model.get_output_embeddings().weight.numel()  # the vocabulary's scores, a row each
    body = weights.numel() - head  # tied: the input embedding is the head, and a lookup costs nothing
    work = [2 * (body * real + head * scored) for real, scored in sizes]
    bound = sum(max(stream, w / flops) for w in work) / repeats
    total = sum(n.values())
    floor = total * one_pass
    print(f"one click's causal columns, {torch.get_num_threads()} torch threads: "
          + ", ".join(f"{k} {n[k]} passes ({rows_tokens[k] // repeats} row-tokens)" for k in n))
    print(f"one pass of one row and one token: p50 {one_pass * 1000:.1f} ms (min {min(one) * 1000:.1f})")
    print(f"reading the {weights.numel() * 4 / 1e6:.0f} MB of weights once: p50 {stream * 1000:.1f} ms "
          f"({weights.numel() * 4 / 1e9 / stream:.1f} GB/s); {total} passes of that alone {total * stream:.2f} s")
    print(f"a large product: {flops / 1e9:.0f} GFLOP/s; the passes' products at that rate alone "
          f"{sum(work) / repeats / flops:.2f} s (real tokens only, the vocabulary scored where kept)")
    print(f"floor (each pass the longer of reading the weights and its products): {bound:.2f} s; "
          f"floor / goal {bound / GOALS['all']:.2f} (goal {GOALS['all']} s for all six; the masking and the MLM "
          f"columns, --first-only, come on top)")
    print(f"as it runs now: {total} passes x {one_pass * 1000:.1f} ms a one-row pass = {floor:.2f} s before any "
          f"row's compute; the causal columns p50 of {repeats}: {statistics.median(clicks):.2f} s, "
          f"floor / measured {bound / statistics.median(clicks):.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--users", type=int, default=4)
    ap.add_argument("--first-only", action="store_true", help="only the first step (/fill_mlm), one user")
    ap.add_argument("--browser", action="store_true",
                    help="the first column in Chromium, a page's first click, timed in the page")
    ap.add_argument("--threads", action="store_true",
                    help="in process: the models thread sized by the load against every core, in turn")
    ap.add_argument("--kernels", action="store_true",
                    help="in process: the causal fillers' products on MKL against oneDNN, in turn")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the in-process non-streaming reference (the ratios against it)")
    ap.add_argument("--floor", action="store_true",
                    help="in process: the causal columns' forward passes, and the floor one-row passes set")
    args = ap.parse_args()
    if args.floor:
        pass_floor(args.repeats)
        return
    if args.kernels:
        kernels_ratio(args.repeats)
        return
    if args.threads:
        threads_ratio(args.repeats)
        return
    from conftest import serve_app

    print(f"sentence ({len(SENTENCE.split())} words): {SENTENCE}")
    with serve_app(dict(os.environ)) as (url, _proc):
        one_request(url, 10_000)  # the first request loads every model: not what a later user waits for
        if args.browser:
            secs = in_browser(url, args.repeats)
            print(f"in Chromium, a page's first click: first column p50 {statistics.median(secs):.3f} s "
                  f"({', '.join(f'{x:.2f}' for x in secs)}; goal {GOALS['first']} s)")
            return
        if args.first_only:
            runs = [one_request(url, s, mlm_only=True) for s in range(1, 4 * args.repeats + 1)]
            page = [page_stream(url, s) for s in range(1000, 1000 + 4 * args.repeats)]
            page_stream(url, 1, "one-page")  # this page's first click
            again = [page_stream(url, s, "one-page") for s in range(2000, 2000 + 4 * args.repeats)]
            for name, rs in (("through gradio_client (each request a new session)", runs),
                             ("as the page's event stream delivers it, a first click on the page", page),
                             ("as the page's event stream delivers it, later clicks on one page", again)):
                print(f"{name}: first column p50 {statistics.median(r['first'] for r in rs):.3f} s, both MLM "
                      f"columns p50 {statistics.median(r['all'] for r in rs):.3f} s (goal {GOALS['first']} s for "
                      f"the first)")
            return
        single = [one_request(url, s) for s in range(1, args.repeats + 1)]
        results: list[dict] = [{}] * args.users
        barrier = threading.Barrier(args.users)

        def user(i: int) -> None:
            barrier.wait()
            t0 = time.perf_counter()
            r = one_request(url, 100 + i)
            results[i] = r | {"waited": time.perf_counter() - t0}

        threads = [threading.Thread(target=user, args=(i,)) for i in range(args.users)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    # The app's own figures first (the reference, in this process, takes minutes on a busy machine).
    print("app, one user (update, answer, first, all):", single, "\nusers:", results, flush=True)
    ref = None if args.no_reference else reference(list(range(1, args.repeats + 1)))
    p50 = {k: statistics.median(r[k] for r in single) for k in ("update", "answer", "first", "all")}
    print(f"\none user, p50 of {args.repeats} (1-min load now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: "
          "the goals are for an idle machine):")
    for k, what in (("update", "first update (the masks)"), ("answer", "the engine's answer"),
                    ("first", "first column"), ("all", "all six columns")):
        goal = GOALS.get(k)
        print(f"  {what:28s} {p50[k]:6.2f} s" + (f"   goal {goal} s, ratio {p50[k] / goal:.2f}" if goal and k != "first"
                                                  else "") + (f"   /reference {p50[k] / ref:.2f}" if ref else ""))
    print("  each request (update, answer, first, all):",
          ", ".join(f"({r['update']:.2f}, {r['answer']:.2f}, {r['first']:.2f}, {r['all']:.2f})" for r in single))
    if ref:
        print(f"reference, the previous non-streaming click (the engine's answer and six columns in sequence, "
              f"in-process, warm; nothing shown before the end) p50: {ref:.2f} s")
    users_update = max(r["update"] for r in results)
    users_all = max(r["all"] for r in results)
    print(f"{args.users} users at once: last first update {users_update:.2f} s, last done {users_all:.2f} s "
          f"(goal {GOALS['users_all']} s, ratio {users_all / GOALS['users_all']:.2f})"
          + (f"; last done / reference {users_all / ref:.2f}" if ref else ""))
    print("per user (update, first, all):", ", ".join(f"({r['update']:.1f}, {r['first']:.1f}, {r['all']:.1f})"
                                                     for r in results))

if __name__ == "__main__":
    main()
