"""Follow-ups end to end on real manuals: short conversations (bench/manual_conversations.jsonl: each
turn a question as people speak it, the standalone question a person would write, and the strings a
right answer holds), asked of a library of the manuals through `Assistant.respond` with real Sessions,
offline (no LLM: the heuristic rewriter, the extractive answer).

Reported: the right-answer rate of the follow-up turns, beside the same questions asked standalone
(each in a fresh session), and of the opening turns. A right answer holds one of the strings
(`grounding_eval.holds_gold`).

The library is built through the public ingest path (`launch.py ingest`'s `ingest_command`) into
`--library` (a cache: an unchanged re-run skips the ingest). The PDFs come from
`../shared/data/eval/manuals/fetch.sh`:

    python -m bench.manual_conversations --pdfs DIR [--library DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_FILE = HERE / "manual_conversations.jsonl"


@dataclass
class Turn:
    question: str
    standalone: str
    answers: list[str]


@dataclass
class Conversation:
    id: str
    file: str
    turns: list[Turn]


@dataclass
class Asked:
    conversation: str
    turn: int  # 0: the opening question
    question: str
    query: str  # what Hark searched
    answer: str
    right: bool
    alone: bool = False  # asked standalone in a fresh session
    ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def read_conversations(path: Path) -> list[Conversation]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(Conversation(d["id"], d["file"], [Turn(**t) for t in d["turns"]]))
    return out


def build(pdfs: Path, library: Path, files: list[str]) -> Any:
    """An offline Assistant over a library of `files` (ingested into `library` unless unchanged)."""
    from assistant.assistant import Assistant
    from assistant.config import load_config
    from ui.cli_ingest import ingest_command

    cfg = load_config()
    cfg.store.data_dir = str(library)
    cfg.store.uri = None
    cfg.llm.order = []  # offline: the extractive answer, the heuristic rewriter
    cfg.trace.path = str(library / "traces.jsonl")
    missing = [f for f in files if not (pdfs / f).is_file()]
    if missing:
        raise SystemExit(f"missing under {pdfs}: {', '.join(missing)} (see ../shared/data/eval/manuals/fetch.sh)")
    t = time.perf_counter()
    ingest_command(cfg.embedder, cfg.store, cfg.ingest, cfg.lancedb_uri, [pdfs / f for f in files])
    print(f"library ready in {time.perf_counter() - t:.0f} s ({library})", flush=True)
    return Assistant(cfg)


def ask(assistant: Any, session: Any, text: str) -> tuple[str, str, float]:
    """One turn: (answer text, the query searched, milliseconds)."""
    from assistant.events import Done, Rewritten

    t = time.perf_counter()
    answer, query = "", text
    for event in assistant.respond(session, text):
        if isinstance(event, Rewritten):
            query = event.query
        elif isinstance(event, Done):
            answer = event.answer.text
            query = event.trace.get("query") or query
    return answer, query, round((time.perf_counter() - t) * 1000, 1)


def run(assistant: Any, conversations: list[Conversation]) -> list[Asked]:
    from assistant.grounding_eval import holds_gold

    out: list[Asked] = []
    for c in conversations:
        session = assistant.new_session()
        for n, turn in enumerate(c.turns):
            answer, query, ms = ask(assistant, session, turn.question)
            out.append(Asked(c.id, n, turn.question, query, answer, holds_gold(answer, turn.answers), ms=ms))
            if n:
                answer, query, ms = ask(assistant, assistant.new_session(), turn.standalone)
                right = holds_gold(answer, turn.answers)
                out.append(Asked(c.id, n, turn.standalone, query, answer, right, alone=True, ms=ms))
    return out


def summary(rows: list[Asked]) -> dict[str, Any]:
    def rate(rs: list[Asked]) -> dict[str, Any]:
        return {"n": len(rs), "right": sum(r.right for r in rs),
                "rate": round(sum(r.right for r in rs) / len(rs), 3) if rs else None}  # fmt: skip

    return {
        "opening turns": rate([r for r in rows if r.turn == 0]),
        "follow-up turns, in conversation": rate([r for r in rows if r.turn and not r.alone]),
        "the same, asked standalone": rate([r for r in rows if r.alone]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdfs", type=Path, required=True, help="the folder fetch.sh downloaded the manuals to")
    ap.add_argument("--library", type=Path, default=None, help="library cache (default <cache>/hark/manual-conversations)")
    ap.add_argument("--file", type=Path, default=DEFAULT_FILE)
    ap.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    ap.add_argument("--json", dest="json_out", default=None, metavar="OUT")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    from models.weights import cache_dir

    conversations = read_conversations(args.file)[: args.limit or None]
    library = (args.library or cache_dir() / "manual-conversations").resolve()
    assistant = build(args.pdfs.resolve(), library, sorted({c.file for c in conversations}))
    rows = run(assistant, conversations)
    for r in rows:
        if r.turn and not r.right:
            mark = "standalone" if r.alone else "follow-up"
            print(f"wrong [{mark}] {r.conversation}#{r.turn}: {r.question!r} → searched {r.query!r}\n"
                  f"    {' '.join(r.answer.split())[:200]}")  # fmt: skip
    s = summary(rows)
    print("\n| turns | n | right | rate |\n|---|---:|---:|---:|")
    for name, v in s.items():
        print(f"| {name} | {v['n']} | {v['right']} | {v['rate']} |")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({**s, "rows": [asdict(r) for r in rows]}, indent=1,
                                                  ensure_ascii=False), encoding="utf-8")  # fmt: skip


if __name__ == "__main__":
    main()
