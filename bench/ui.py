"""The Gradio app, measured from outside: start-up, and typed turns through the real HTTP API.

    python -m bench.ui [--docs 60] [--questions 12] [--concurrency 4]

Builds the real Assistant (MiniLM, whisper tiny.en, extractive answers, no keys) on a temporary
library of XQuAD paragraphs (one file each), serves the app on 127.0.0.1, and asks XQuAD questions
about those paragraphs through `gradio_client`: alone, then from `--concurrency` clients at once.
Prints a table: start-up seconds (models, app build, launch) and per-turn milliseconds to the first
update carrying answer text and to the end of the turn (p50/p95), plus the share of answers that
contain the gold answer span. Numbers depend on the load of the machine: compare side by side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench.common import EVAL, ROOT, pct

XQUAD = EVAL / "xquad_en"


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(_text(p.get("text", "") if isinstance(p, dict) else p) for p in content)
    return str(content)


def _library(folder: Path, n_docs: int) -> list[tuple[str, list[str]]]:
    """Write `n_docs` XQuAD paragraphs as files; return (question, answers) about them."""
    corpus = [json.loads(line) for line in (XQUAD / "corpus.jsonl").read_text().splitlines()][:n_docs]
    ids = {d["_id"] for d in corpus}
    for d in corpus:
        (folder / f"{d['_id']}.txt").write_text(f"{d['title']}\n\n{d['text']}\n", encoding="utf-8")
    qrels = {}
    for line in (XQUAD / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        qid, cid, _ = line.split("\t")
        qrels[qid] = cid
    out = []
    for line in (XQUAD / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        if qrels.get(q["_id"]) in ids:
            out.append((q["text"], q.get("answers", [])))
    return out


def _direct(assistant: object, question: str) -> float:
    """Milliseconds for the same turn through `Assistant.respond` directly (no UI, no HTTP)."""
    session = assistant.new_session()  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    for _ in assistant.respond(session, question):  # type: ignore[attr-defined]
        pass
    return (time.perf_counter() - t0) * 1000


def _turn(client: object, question: str) -> tuple[float, float, str]:
    t0 = time.perf_counter()
    first = None
    job = client.submit(question, api_name="/ask")
    for update in job:
        messages = update[0]
        last = _text(messages[-1]["content"]) if messages else ""
        if first is None and last and last != "…":
            first = time.perf_counter() - t0
    total = time.perf_counter() - t0
    answer = _text(job.result()[0][-1]["content"])
    return (first if first is not None else total) * 1000, total * 1000, answer


def _gradio_floor() -> tuple[object, object]:
    """A trivial two-update generator served the same way (Gradio's own queue + HTTP cost on this
    machine right now), to read the app's overhead against. → (demo, client)."""
    import gradio as gr
    from gradio_client import Client

    def echo(text: str):
        yield [{"role": "user", "content": text}], ""
        yield [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}], ""

    with gr.Blocks() as demo:
        box, chat = gr.Textbox(), gr.Chatbot()
        box.submit(echo, box, [chat, box], api_name="ask")
    demo.queue(default_concurrency_limit=4)
    from tests.ui.conftest import free_port

    _, url, _ = demo.launch(
        prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True
    )
    client = Client(url, verbose=False)
    list(client.submit("warm", api_name="/ask"))
    return demo, client


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=60)
    ap.add_argument("--questions", type=int, default=12)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()

    from assistant.assistant import Assistant
    from assistant.config import load_config
    from models.runtime.errors import HarkError
    from tests.ui.conftest import free_port
    from ui.app import build_app, serve
    from ui.launch_plan import LaunchPlan

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        docs = base / "docs"
        docs.mkdir()
        qa = _library(docs, args.docs)[: args.questions * (1 + args.concurrency)]
        cfg = load_config(ROOT / "config.yaml")
        cfg.embedder.backend = "minilm"
        cfg.speech.model = "tiny.en"
        cfg.intent.adapter_dir = str(ROOT / "models" / "intent_adapter")
        cfg._base_dir = base

        rows: list[tuple[str, str]] = []
        t = time.perf_counter()
        assistant = Assistant(cfg)
        try:
            assistant.warm_up()
        except HarkError as exc:
            print(f"(warm-up incomplete: {exc.message})")
        rows.append(("start-up: load models (warm_up)", f"{time.perf_counter() - t:.1f} s"))
        t = time.perf_counter()
        assistant.ingest([docs])
        rows.append(
            (f"ingest {args.docs} paragraphs (not part of start-up)", f"{time.perf_counter() - t:.1f} s")
        )
        t = time.perf_counter()
        demo = build_app(assistant, cfg)
        rows.append(("start-up: build the app", f"{(time.perf_counter() - t) * 1000:.0f} ms"))
        t = time.perf_counter()
        url, _ = serve(demo, cfg, LaunchPlan("127.0.0.1", free_port(), False, None), block=False)
        rows.append(("start-up: launch (page served)", f"{(time.perf_counter() - t) * 1000:.0f} ms"))

        from gradio_client import Client

        client = Client(url, verbose=False)
        _turn(client, "hello")  # first request (caches)
        floor_demo, floor_client = _gradio_floor()
        single, direct, floor = [], [], []
        for q, _ in qa[: args.questions]:  # side by side: directly, via the app, the trivial floor
            direct.append(_direct(assistant, q))
            single.append(_turn(client, q))
            t0 = time.perf_counter()
            list(floor_client.submit(q, api_name="/ask"))  # type: ignore[attr-defined]
            floor.append((time.perf_counter() - t0) * 1000)
        floor_demo.close()  # type: ignore[attr-defined]
        hits = sum(
            any(a.lower() in ans.lower() for a in answers)
            for (_, answers), (_, _, ans) in zip(qa, single, strict=False)
        )

        conc: list[tuple[float, float, str]] = []
        lock = threading.Lock()
        pending = qa[args.questions : args.questions * (1 + args.concurrency)]

        def worker(items: list[tuple[str, list[str]]]) -> None:
            own = Client(url, verbose=False)  # one browser tab each
            for q, _ in items:
                r = _turn(own, q)
                with lock:
                    conc.append(r)

        t = time.perf_counter()
        threads = [
            threading.Thread(target=worker, args=(pending[i :: args.concurrency],))
            for i in range(args.concurrency)
        ]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        wall = time.perf_counter() - t
        demo.close()

    def stats(name: str, results: list[tuple[float, float, str]]) -> None:
        firsts, totals = [r[0] for r in results], [r[1] for r in results]
        rows.append(
            (
                f"{name}: first answer text, p50 / p95",
                f"{statistics.median(firsts):.0f} / {pct(firsts, 0.95):.0f} ms",
            )
        )
        rows.append(
            (
                f"{name}: whole turn, p50 / p95",
                f"{statistics.median(totals):.0f} / {pct(totals, 0.95):.0f} ms",
            )
        )

    rows.append(("same questions via Assistant.respond directly, p50", f"{statistics.median(direct):.0f} ms"))
    stats(f"1 client, {len(single)} turns", single)
    overhead = [s[1] - d for s, d in zip(single, direct, strict=True)]
    rows.append(("app + HTTP overhead per turn (paired), p50", f"{statistics.median(overhead):.0f} ms"))
    rows.append(("floor: trivial Gradio generator, same client, p50", f"{statistics.median(floor):.0f} ms"))
    rows.append(("1 client: answers containing the gold span", f"{hits}/{len(single)}"))
    stats(f"{args.concurrency} clients, {len(conc)} turns", conc)
    rows.append((f"{args.concurrency} clients: throughput", f"{len(conc) / wall:.2f} turns/s"))

    width = max(len(r[0]) for r in rows)
    print(f"| {'measure'.ljust(width)} | value |")
    print(f"|{'-' * (width + 2)}|-------|")
    for name, value in rows:
        print(f"| {name.ljust(width)} | {value} |")


if __name__ == "__main__":
    main()
