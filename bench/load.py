"""Turn latency under load: N concurrent gradio_client sessions against the real app.

    python -m bench.load [--sessions 20] [--rounds 2] [--concurrency 4] [--ttft 0.2] [--extractive]
    python -m bench.load --team [--sessions 40] …

The real app (tests/hostile/load_rig.py: 20 project documents, MiniLM, the real Assistant) is served
on 127.0.0.1; answers come from an OpenAI-compatible loopback server with a fixed time to first token
(tests/llm_server.py), or with `--extractive` from the extractive answerer. Each session asks about
its own project, then a follow-up, `--rounds` times. Prints p50/p95 of the client-side turn time
(request to final answer), errors, and whether every answer stayed in its own session.

`--team`: side by side, real `launch.py` app processes (tests/hostile/team_rig.py), the library
filled by `launch.py ingest`: one process on a local folder, then two processes sharing a library
on an S3 server (moto over HTTP, tests/s3_server.py), the sessions split evenly between them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.common import load_average, pct


def measure(urls: list[str], sessions: int, rounds: int) -> dict[str, float]:
    """`rounds` × `sessions` concurrent sessions, session i on urls[i % len(urls)]."""
    import threading

    from tests.hostile.load_rig import PEOPLE, SessionLog, run_session

    def wave(n: int) -> list[SessionLog]:
        logs: list[SessionLog | None] = [None] * n

        def go(i: int) -> None:
            logs[i] = run_session(urls[i % len(urls)], i % len(PEOPLE), follow_up=True)

        threads = [threading.Thread(target=go, args=(i,), daemon=True) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=900)
        return [lg if lg is not None else SessionLog(-1, error="did not finish") for lg in logs]

    wave(2 * len(urls))  # warm the shared parts of every process once
    seconds, errors, crossed, turns = [], [], 0, 0
    t0 = time.perf_counter()
    for _ in range(rounds):
        for lg in wave(sessions):
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
    for e in errors[:5]:
        print("error:", e, file=sys.stderr)
    return {"turns": turns, "errors": len(errors), "crossed": crossed,
            "p50": statistics.median(seconds) if seconds else float("nan"), "p95": pct(seconds, 0.95),
            "max": max(seconds, default=float("nan")), "rate": turns / wall}


def team(args: argparse.Namespace, providers: dict | None) -> list[tuple[str, dict[str, float]]]:
    """One app process on a local library, then two sharing an S3 library; the same sessions."""
    from tests.hostile.load_rig import write_library
    from tests.hostile.team_rig import finish, ingest, start_app, write_config
    from tests.s3_server import S3Server, credentials

    base = Path(tempfile.mkdtemp(prefix="hark-team-"))
    docs = write_library(base / "docs")
    rows = []
    s3 = S3Server().start()
    try:
        with credentials():
            uri = s3.new_uri()
            layouts = [("1 process, local folder", [(base / "solo", str(base / "solo" / "lancedb"), None)]),
                       ("2 processes, S3 (moto)", [(base / n, uri, s3.storage_options()) for n in ("a", "b")])]
            for label, machines in layouts:
                cfgs = [write_config(folder, u, o, providers=providers, concurrency=args.concurrency)
                        for folder, u, o in machines]
                rc, _out, err = finish(ingest(cfgs[0], docs))
                if rc != 0:
                    raise RuntimeError(f"ingest failed: {err[-2000:]}")
                apps = [start_app(c) for c in cfgs]
                try:
                    urls = [a.wait_ready() for a in apps]
                    rows.append((label, measure(urls, args.sessions, args.rounds)))
                finally:
                    for a in apps:
                        a.stop()
    finally:
        s3.stop()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2, help="question + follow-up pairs per session")
    ap.add_argument("--concurrency", type=int, default=4, help="the app's queue concurrency limit")
    ap.add_argument("--ttft", type=float, default=0.2, help="loopback time to first token, seconds")
    ap.add_argument("--extractive", action="store_true", help="no LLM: the extractive answerer")
    ap.add_argument("--team", action="store_true",
                    help="app processes: 1 on a local library vs 2 sharing an S3 library (moto)")
    args = ap.parse_args()

    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings
    from tests.hostile.load_rig import start_app
    from tests.llm_server import LLMServer, Reply

    server = None
    providers = None
    if not args.extractive:
        server = LLMServer(default=Reply("Here is the answer from the context [1].", ttft=args.ttft),
                           max_lifetime=3600).start()
        providers = {"loopback": {"kind": "openai_compatible", "model": "loopback",
                                  "base_url": server.openai_url, "key_env": []}}
    if args.team:
        rows = team(args, providers)
    else:
        emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
        emb.warm_up()
        app = start_app(Path(tempfile.mkdtemp(prefix="hark-load-")), emb, concurrency=args.concurrency,
                        providers=providers)
        try:
            rows = [("1 app, in this process", measure([app.url], args.sessions, args.rounds))]
        finally:
            app.close()
    if server is not None:
        server.stop()
    load = load_average()
    answerer = "extractive" if args.extractive else f"loopback LLM, TTFT {args.ttft * 1000:.0f} ms"
    print(f"\n# bench/load.py — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load:.1f}")
    print(f"{args.sessions} concurrent sessions × {args.rounds} rounds × 2 turns; queue concurrency "
          f"{args.concurrency}; {answerer}")
    print("| app | turns | errors | crossed | p50 s | p95 s | max s | turns/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, r in rows:
        print(f"| {label} | {r['turns']} | {r['errors']} | {r['crossed']} | {r['p50']:.2f} | {r['p95']:.2f} "
              f"| {r['max']:.2f} | {r['rate']:.2f} |")
    return 0 if all(not r["errors"] and not r["crossed"] for _, r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
