"""End-to-end latency budget: from the end of a spoken (or typed) question to the first answer token.

    python -m bench.e2e [--voice 12] [--typed 40] [--filler 10000] [--filler-words 500] [--speech-model base] [--ttft 0.2]
    python -m bench.e2e --voice 0 --other DIR    # typed turns, side by side with another checkout's code

`--other DIR`: the same bench through another checkout's packages (e.g. `git archive BASE | tar -x -C DIR`),
run after this one in a child process; its p50s beside this code's. The guards (Hark's typed share
≤ 40 ms p50, its intent stage ≤ 10 ms p50) are checked on this code's run.

Setup (all real, nothing downloaded): the XQuAD-en paragraphs ingested with the real Ingestor
(MiniLM — CLIP has no offline weights here), padded to `--filler` chunks of `--filler-words` words
of NQ passages stored with random unit vectors (so search, full-text and memory see a 10k-chunk
library of chunker-sized chunks); the real intent
classifier (when its adapter is trained), follow-up rewriter, retriever and rerank; faster-whisper
`--speech-model` (int8 on the CPU); and an OpenAI-compatible loopback LLM server whose
time-to-first-token is fixed at `--ttft` seconds (tests/llm_server.py), reached through the real
openai client.

Voice turns: 5-second espeak-ng questions (sox tempo-fitted), the clip complete when `respond()` is
called (= the end of speech). Per stage, the turn trace's milliseconds (transcribe, persona, intent,
rewrite, embed, search, rerank); "prompt" is from the Sources event to the request's arrival at the
server (grounding, prompt building, the HTTP request); "provider" the server's own time to first
token; "delivery" from the server writing the first token to the caller receiving it. Hark's own
share = total − provider. Resident memory (VmRSS, VmHWM) is read with every model loaded.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import EVAL, ROOT, jsonl, load_average, memory_mb, pct

GUARDS = {"hark": 40.0, "intent": 10.0}  # typed turns, p50 ms
# "retrieve": what the turn waited for the search that ran beside the intent; "answerability": the
# decision on its evidence
STAGES = ["transcribe", "persona", "intent", "rewrite", "retrieve.embed", "retrieve.search", "retrieve.rerank",
          "retrieve", "answerability", "prompt", "provider", "delivery"]
# CPU times, which a busy machine inflates far less than wall-clock times: "hark_cpu" the process's CPU
# from the call to the first token (every thread), "intent_cpu" one IntentClassifier.predict alone
CPU = ["hark_cpu", "intent_cpu"]


def build_library(
    tmp: Path, assistant, filler: int, seed: int = 0, n_docs: int | None = None, filler_words: int = 500
) -> tuple[list[dict], int]:
    """XQuAD paragraphs as files (real ingest) + chunks of `filler_words` words of consecutive NQ
    passages (the chunker's size, so full-text and memory see real-sized chunks) with random vectors,
    up to `filler` chunks."""
    import numpy as np

    from knowledge.types import Chunk

    corpus = jsonl(EVAL / "xquad_en" / "corpus.jsonl")[:n_docs]
    queries = jsonl(EVAL / "xquad_en" / "queries.jsonl")
    docs = tmp / "docs"
    docs.mkdir()
    for d in corpus:
        (docs / f"{d['_id']}.txt").write_text(f"{d.get('title', '')}\n\n{d['text']}\n", encoding="utf-8")
    t0 = time.perf_counter()
    report = assistant.ingest([docs])
    print(f"ingested {len(corpus)} XQuAD paragraphs in {time.perf_counter() - t0:.1f} s "
          f"({report.total_chunks} chunks)", file=sys.stderr)
    store = assistant.store()
    need = max(0, filler - store.count())
    if need:
        nq = jsonl(EVAL / "nq_oracle" / "corpus.jsonl")
        words = " ".join(d["text"] for d in nq).split()
        rng = np.random.default_rng(seed)
        batch: dict[str, tuple[list[Chunk], np.ndarray]] = {}
        for i in range(need):
            d = nq[i % len(nq)]
            sp = f"filler/{i // 50:04d}.txt"
            start = (i * filler_words) % max(1, len(words) - filler_words)
            text = " ".join(words[start : start + filler_words])
            chunk = Chunk(chunk_id=f"filler-{i}", source_path=sp, chunk_text=f"{text} (copy {i})",
                          title=d.get("title", ""), text_hash=f"filler-{i}")
            chunks, vecs = batch.get(sp, ([], np.zeros((0, store.dim), dtype=np.float32)))
            v = rng.standard_normal(store.dim).astype(np.float32)
            batch[sp] = (chunks + [chunk], np.vstack([vecs, v / np.linalg.norm(v)]))
            if len(batch) >= 40 or i == need - 1:
                store.replace_files(batch)
                batch = {}
        store.update_indexes()
    ids = {d["_id"] for d in corpus}
    qrels = {}
    for line in (EVAL / "xquad_en" / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        qid, did, *_ = line.split("\t")
        if did in ids:
            qrels[qid] = did
    return [q for q in queries if q["_id"] in qrels], store.count()


def spoken_questions(tmp: Path, questions: list[str]) -> list[Path]:
    from tests.hostile.audio import spoken

    return [spoken(q, tmp / f"q{i}.wav", seconds=5.0) for i, q in enumerate(questions)]


def run_turn(assistant, session, user_input, server) -> dict[str, float]:
    from assistant.events import Done, Sources, Token

    server.clear()
    t0, c0 = time.perf_counter(), time.process_time()
    t_sources = t_token = c_token = None
    done = None
    for e in assistant.respond(session, user_input):
        now = time.perf_counter()
        if isinstance(e, Sources) and t_sources is None:
            t_sources = now
        elif isinstance(e, Token) and t_token is None:
            t_token, c_token = now, time.process_time()
        elif isinstance(e, Done):
            done = e
    reqs = [r for r in server.requests if r.first_token_at is not None]
    if done is None or t_token is None or not reqs or t_sources is None:
        return {}
    rec = reqs[0]
    ms = dict(done.trace.get("timings_ms", {}))
    row = {k: float(ms.get(k, 0.0)) for k in STAGES if k in ms or k in ("persona", "rewrite", "retrieve")}
    row["prompt"] = (rec.received_at - t_sources) * 1000
    row["provider"] = (rec.first_token_at - rec.received_at) * 1000
    row["delivery"] = (t_token - rec.first_token_at) * 1000
    row["total"] = (t_token - t0) * 1000
    row["hark"] = row["total"] - row["provider"]
    row["hark_cpu"] = (c_token - c0) * 1000  # the process's CPU time to the first token, all threads
    row["provider_name"] = done.answer.provider  # type: ignore[assignment]
    return row


def table(title: str, rows: list[dict]) -> str:
    ok = [r for r in rows if r and r.get("provider_name") == "loopback"]
    out = [f"\n{title}: {len(ok)} turns answered by the loopback provider (of {len(rows)})",
           "| stage | p50 ms | p90 ms |", "|---|---:|---:|"]
    for k in [*STAGES, "total", "hark", *CPU]:
        vals = [r[k] for r in ok if k in r]
        if vals:
            out.append(f"| {k} | {statistics.median(vals):.1f} | {pct(vals, 0.9):.1f} |")
    return "\n".join(out)


def p50s(rows: list[dict]) -> dict[str, float]:
    """Each stage's p50 over the turns the loopback provider answered."""
    ok = [r for r in rows if r and r.get("provider_name") == "loopback"]
    keys = [k for k in [*STAGES, "total", "hark", *CPU] if any(k in r for r in ok)]
    return {k: statistics.median([r[k] for r in ok if k in r]) for k in keys} | {"n": float(len(ok))}


def other_run(args: argparse.Namespace) -> dict:
    """This bench through `args.other`'s packages (PYTHONPATH), in a child process; its `--json` line."""
    import json
    import os
    import subprocess

    cmd = [sys.executable, __file__, "--json", "--no-clip-memory", "--voice", str(args.voice), "--typed",
           str(args.typed), "--filler", str(args.filler), "--filler-words", str(args.filler_words),
           "--speech-model", args.speech_model, "--ttft", str(args.ttft), "--seed", str(args.seed),
           "--embedder", args.embedder, *(["--search", args.search] if args.search else []),
           *(["--docs", str(args.docs)] if args.docs else [])]
    env = {**os.environ, "PYTHONPATH": str(args.other.resolve())}
    done = subprocess.run(cmd, cwd=args.other, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def side_by_side(mine: dict, other: dict, other_name: str) -> str:
    out = [f"\nTyped questions, p50 ms: this code (load {mine['load']:.1f}) | {other_name} (load {other['load']:.1f})",
           "| stage | this code | other |", "|---|---:|---:|"]
    for k in [*STAGES, "total", "hark", *CPU]:
        if k in mine["typed"] or k in other["typed"]:
            a, b = mine["typed"].get(k), other["typed"].get(k)
            out.append(f"| {k} | {'' if a is None else f'{a:.1f}'} | {'' if b is None else f'{b:.1f}'} |")
    a, b = mine.get("first_typed_hark"), other.get("first_typed_hark")  # an older checkout's JSON may lack it
    out.append(f"| hark, first turn | {'' if a is None else f'{a:.1f}'} | {'' if b is None else f'{b:.1f}'} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--voice", type=int, default=12, help="spoken questions (each 5 s)")
    ap.add_argument("--typed", type=int, default=40, help="typed questions")
    ap.add_argument("--filler", type=int, default=10000, help="library size in chunks")
    ap.add_argument("--filler-words", type=int, default=500, help="words per filler chunk (the chunker's size)")
    ap.add_argument("--speech-model", default="base")
    ap.add_argument("--ttft", type=float, default=0.2, help="loopback time to first token, seconds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--search", choices=["dense", "hybrid"], default=None, help="override retrieval.search")
    ap.add_argument("--no-clip-memory", dest="clip_memory", action="store_false",
                    help="skip loading a CLIP-sized model for the memory figure")
    ap.add_argument("--docs", type=int, default=None, help="XQuAD paragraphs to ingest (default all 240)")
    ap.add_argument("--embedder", choices=["minilm", "clip-random"], default="minilm",
                    help="clip-random: the mission's CLIP ViT-B-32 as THE embedder (random weights: the real "
                         "size and speed, meaningless answers) — the memory of a CLIP deployment")
    ap.add_argument("--keep", action="store_true", help="keep the temporary library folder")
    ap.add_argument("--other", type=Path, default=None, help="another checkout, measured after this one")
    ap.add_argument("--json", action="store_true", help="end with one JSON line of p50s (for --other)")
    args = ap.parse_args()

    from assistant.assistant import Assistant
    from assistant.config import load_config
    from models.runtime.heap import trim_heap
    from tests.llm_server import LLMServer, Reply

    server = LLMServer(default=Reply("The answer is in the first block [1].", ttft=args.ttft), max_lifetime=3600)
    server.start()
    tmp = Path(tempfile.mkdtemp(prefix="hark-e2e-"))
    try:
        cfg = load_config(ROOT / "config.yaml", **{
            "embedder": {"backend": "minilm"} if args.embedder == "minilm" else {"backend": "clip", "clip_pretrained": ""},
            "store": {"data_dir": str(tmp / "data")},
            "speech": {"model": args.speech_model, "compute_type": "int8", "device": "cpu"},
            "tts": {"enabled": False},
            **({"retrieval": {"search": args.search}} if args.search else {}),
            "trace": {"path": str(tmp / "data" / "traces.jsonl"), "log_path": str(tmp / "data" / "hark.log")},
            "llm": {"order": ["loopback"], "cooldown_seconds": 0,
                    "providers": {"loopback": {"kind": "openai_compatible", "model": "loopback",
                                               "base_url": server.openai_url, "key_env": []}}},
        })
        cfg._base_dir = ROOT
        assistant = Assistant(cfg)
        t0 = time.perf_counter()
        rss = [("start", memory_mb()["VmRSS"])]
        try:  # one part at a time, to see what each adds to the resident size
            assistant.warm_up(tts=False, on_loaded=lambda name: rss.append((name, memory_mb()["VmRSS"])))
        except Exception as exc:  # noqa: BLE001 - e.g. no intent adapter yet: say so, go on degraded
            print(f"warm-up incomplete: {exc}", file=sys.stderr)
        trim_heap()  # as the app's wiring does after loading
        print(f"models loaded in {time.perf_counter() - t0:.1f} s: {assistant.status()['models_loaded']}",
              file=sys.stderr)
        queries, n_chunks = build_library(tmp, assistant, args.filler, args.seed, args.docs, args.filler_words)
        assistant.library_changed()  # as after an ingest in the app (the filler was written to the store directly)
        trim_heap()
        random.Random(args.seed).shuffle(queries)

        # the first turn after the warm-up: what the user's first question waits (reported apart);
        # it warms what the warm-up leaves cold, so the turns below measure the steady state
        first = run_turn(assistant, assistant.new_session(), queries[0]["text"], server)

        typed = [run_turn(assistant, assistant.new_session(), q["text"], server) for q in queries[1 : 1 + args.typed]]
        classifier = assistant.parts.classifier.get_or_none()
        for row, q in zip(typed, queries[1 : 1 + args.typed], strict=False):
            if row and classifier is not None:
                c0 = time.thread_time()
                classifier.predict(q["text"])
                row["intent_cpu"] = (time.thread_time() - c0) * 1000
        voice_qs = [q["text"] for q in queries[1 + args.typed :] if 6 <= len(q["text"].split()) <= 12][: args.voice]
        clips = spoken_questions(tmp, voice_qs)
        from assistant.events import AudioInput

        if clips:  # warm whisper on the first of this run's own clips (none with --voice 0)
            run_turn(assistant, assistant.new_session(), AudioInput(path=str(clips[0])), server)
        voice = [run_turn(assistant, assistant.new_session(), AudioInput(path=str(c)), server) for c in clips]
        mem = memory_mb()
        load = load_average()
        clip_mem = None
        if args.clip_memory and args.embedder == "minilm":
            # the mission's embedder is CLIP ViT-B-32; its weights are not available offline, so the same
            # architecture with random weights (the same size in memory) is loaded beside the rest
            from models.embedder import ClipEmbedder
            from models.settings import EmbedderSettings

            clip = ClipEmbedder(EmbedderSettings(backend="clip"), random_weights=True)
            clip.warm_up()
            clip.embed_query("warm the text tower")
            clip_mem = memory_mb()

        print(f"\n# bench/e2e.py — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load:.1f}")
        print(f"retrieval.search {cfg.retrieval.search}; library: {n_chunks} chunks; embedder {assistant.status()['embedder']['identity']}; speech "
              f"{args.speech_model} int8; loopback TTFT {args.ttft * 1000:.0f} ms; models {assistant.status()['models_loaded']}")
        print(table("Typed questions", typed))
        print(table(f"Spoken 5-second questions (whisper {args.speech_model} int8)", voice))
        for name, rows, target in (("typed", typed, GUARDS["hark"]), ("voice", voice, 1000.0)):
            vals = [r["hark"] for r in rows if r and r.get("provider_name") == "loopback"]
            if vals:
                p50 = statistics.median(vals)
                print(f"Hark's own share, {name}: p50 {p50:.0f} ms (target ≤ {target:.0f} ms): "
                      f"{'met' if p50 <= target else 'NOT met'}")
        if first and first.get("provider_name") == "loopback":
            print(f"Hark's own share, the first typed turn after the warm-up: {first['hark']:.0f} ms")
        intent = p50s(typed).get("intent")
        if intent is not None:
            print(f"Intent stage, typed: p50 {intent:.1f} ms (target ≤ {GUARDS['intent']:.0f} ms): "
                  f"{'met' if intent <= GUARDS['intent'] else 'NOT met'}")
        summary = {"typed": p50s(typed), "voice": p50s(voice), "load": load,
                   "first_typed_hark": first.get("hark") if first else None}
        print(f"Resident memory with all models loaded and {n_chunks} chunks: VmRSS {mem['VmRSS']:.0f} MB, "
              f"peak VmHWM {mem['VmHWM']:.0f} MB (target ≤ 2048 MB)")
        print("Resident size added by each part as it loads (MB): " + ", ".join(
            f"{name} +{now - before:.0f}" for (_, before), (name, now) in zip(rss, rss[1:], strict=False))
            + f"; the {n_chunks}-chunk library and the turns +{mem['VmRSS'] - rss[-1][1]:.0f} (start {rss[0][1]:.0f})")
        if clip_mem:
            print(f"… plus a CLIP ViT-B-32 (open_clip, random weights — same size as the OpenAI weights): "
                  f"VmRSS {clip_mem['VmRSS']:.0f} MB, peak VmHWM {clip_mem['VmHWM']:.0f} MB")
    finally:  # also after an error: no server thread or temporary library left behind
        server.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.other is not None:
        print(side_by_side(summary, other_run(args), str(args.other)))
    if args.json:
        import json

        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    threading.current_thread().name = "bench-e2e"
    sys.exit(main())
