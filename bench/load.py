"""Turn latency under load: N concurrent gradio_client sessions against the real app.

    python -m bench.load [--sessions 20] [--rounds 2] [--concurrency 4] [--ttft 0.2] [--extractive]

The real app (tests/hostile/load_rig.py: 20 project documents, MiniLM, the real Assistant) is served
on 127.0.0.1; answers come from an OpenAI-compatible loopback server with a fixed time to first token
(tests/llm_server.py), or with `--extractive` from the extractive answerer. Each session asks about
its own project, then a follow-up, `--rounds` times. Prints p50/p95 of the client-side turn time
(request to final answer), errors, and whether every answer stayed in its own session.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.common import load_average, pct


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2, help="question + follow-up pairs per session")
    ap.add_argument("--concurrency", type=int, default=4, help="the app's queue concurrency limit")
    ap.add_argument("--ttft", type=float, default=0.2, help="loopback time to first token, seconds")
    ap.add_argument("--extractive", action="store_true", help="no LLM: the extractive answerer")
    args = ap.parse_args()

    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings
    from tests.hostile.load_rig import PEOPLE, run_sessions, start_app
    from tests.llm_server import LLMServer, Reply

    server = None
    providers = None
    if not args.extractive:
        server = LLMServer(default=Reply("Here is the answer from the context [1].", ttft=args.ttft),
                           max_lifetime=3600).start()
        providers = {"loopback": {"kind": "openai_compatible", "model": "loopback",
                                  "base_url": server.openai_url, "key_env": []}}
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    emb.warm_up()
    app = start_app(Path(tempfile.mkdtemp(prefix="hark-load-")), emb, concurrency=args.concurrency,
                    providers=providers)
    run_sessions(app.url, 2, follow_up=True)  # warm the shared parts once
    seconds, errors, crossed, turns = [], [], 0, 0
    t0 = time.perf_counter()
    for _ in range(args.rounds):
        for lg in run_sessions(app.url, args.sessions, follow_up=True):
            if lg.error:
                errors.append(lg.error)
                continue
            name = PEOPLE[lg.person][0]
            for i, t in enumerate(lg.turns):
                turns += 1
                seconds.append(t["seconds"])
                if t["users"] != [x["q"] for x in lg.turns[: i + 1]]:
                    crossed += 1
                if any(f"Project {n}" in t["meta"] for n, _, _ in PEOPLE if n != name):
                    crossed += 1
    wall = time.perf_counter() - t0
    app.close()
    if server is not None:
        server.stop()
    load = load_average()
    answerer = "extractive" if args.extractive else f"loopback LLM, TTFT {args.ttft * 1000:.0f} ms"
    print(f"\n# bench/load.py — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load:.1f}")
    print(f"{args.sessions} concurrent sessions × {args.rounds} rounds × 2 turns; queue concurrency "
          f"{args.concurrency}; {answerer}")
    print("| turns | errors | crossed | p50 s | p95 s | max s | turns/s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {turns} | {len(errors)} | {crossed} | {statistics.median(seconds):.2f} | {pct(seconds, 0.95):.2f} "
          f"| {max(seconds):.2f} | {turns / wall:.2f} |")
    for e in errors[:5]:
        print("error:", e)
    return 0 if not errors and not crossed else 1


if __name__ == "__main__":
    sys.exit(main())
