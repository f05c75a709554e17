"""`eval followups`: how well Hark turns follow-ups into standalone queries, against people's rewrites.

Each dialog of a followups file (`{"dialog", "turn", "title", "section", "history", "question",
"rewrite"}` a line, e.g. CANARD) is replayed into a real `Session`: the topic as the opening exchange
("Tell me about TITLE, SECTION."), then each earlier question with its answer, every question carrying
the query Hark made of it (as a live conversation would). The rewriter is the one a turn builds
(`FollowUpRewriter` with the configured LLM chain; offline, the heuristic). Reported:

- resolution: of the words a person added (content words of `rewrite` not in `question` that occur in
  the conversation so far), the share Hark's query holds;
- precision: of the content words Hark added, the share the person's rewrite also has;
- left alone: of the questions the person left as they were, the share Hark does not change.

Dialogs are split into halves by a hash of their id: defaults are chosen on `select`, reported on
`report`. Per follow-up kind: pronoun, "what about", "anything else", ellipsis (the other rewritten).
"""

from __future__ import annotations

import json
import re
import zlib
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from assistant.llm.words import content_words
from assistant.memory import Exchange
from assistant.rewrite import FollowUpRewriter, rewrite_question
from assistant.session import Session
from models.runtime.errors import HarkError

HALVES = ("all", "select", "report")
KINDS = ("pronoun", "what about", "anything else", "ellipsis", "standalone")
_PRONOUN = re.compile(r"\b(he|him|his|she|her|hers|it|its|they|them|their|theirs)\b", re.I)
_ABOUT = re.compile(r"^\W*(and\s+)?(what|how)\s+about\b", re.I)
_ELSE = re.compile(r"\b(anything|something|what)\s+else\b|\b(any|other)\s+(other\s+)?(interesting|notable|"
                   r"important)\b|\bany\s*thing\s+(more|further)\b|\btell me more\b", re.I)  # fmt: skip


@dataclass(frozen=True)
class Item:
    dialog: str
    turn: int
    title: str
    section: str
    history: list[tuple[str, str]]
    question: str
    rewrite: str


@dataclass
class Row:
    dialog: str
    turn: int
    kind: str
    question: str
    rewrite: str
    query: str  # Hark's
    method: str  # none | heuristic | llm
    wanted: int  # words the person added that occur in the conversation so far
    held: int  # of those, in Hark's query
    added: int  # content words Hark added
    right: int  # of those, in the person's rewrite
    left_alone: bool | None  # None: the person rewrote the question


def same(a: str, b: str) -> bool:
    return " ".join(a.split()).lower().rstrip("?.! ") == " ".join(b.split()).lower().rstrip("?.! ")


def kind_of(question: str, rewrite: str) -> str:
    if same(question, rewrite):
        return "standalone"
    if _ABOUT.match(question):
        return "what about"
    if _ELSE.search(question):
        return "anything else"
    return "pronoun" if _PRONOUN.search(question) else "ellipsis"


def read_items(path: Path) -> list[Item]:
    if not Path(path).is_file():
        raise HarkError(f"no followups file at {path}", "pass --file FOLLOWUPS.jsonl")
    items = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            items.append(Item(str(d["dialog"]), int(d["turn"]), str(d.get("title", "")), str(d.get("section", "")),
                              [(str(q), str(a)) for q, a in d.get("history", [])], str(d["question"]),
                              str(d["rewrite"])))  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            raise HarkError(f"{path}:{n}: not a followups line ({type(exc).__name__}: {exc})",
                            'each line needs "dialog", "turn", "history", "question", "rewrite"') from exc  # fmt: skip
    return items


def half_of(items: list[Item], which: str) -> list[Item]:
    """'select' / 'report': disjoint halves by a hash of the dialog id; 'all': every item."""
    if which not in HALVES:
        raise HarkError(f"unknown half {which!r}", f"choose from {', '.join(HALVES)}")
    if which == "all":
        return items
    want = 0 if which == "select" else 1
    return [it for it in items if zlib.crc32(it.dialog.encode()) % 2 == want]


def opening(title: str, section: str) -> str:
    topic = ", ".join(p for p in (title.strip(), section.strip()) if p)
    return f"Tell me about {topic}." if topic else ""


def replay(items: list[Item], session_factory, rewriter: FollowUpRewriter) -> list[Row]:
    """Every dialog through a fresh Session: the opening, then the history, each earlier question
    remembered with the query Hark made of it and the answer the dataset gives."""
    dialogs: dict[str, list[Item]] = defaultdict(list)
    for it in items:
        dialogs[it.dialog].append(it)
    rows: list[Row] = []
    for turns in dialogs.values():
        turns.sort(key=lambda it: it.turn)
        session: Session = session_factory()
        text = opening(turns[0].title, turns[0].section)
        if text:
            session.remember(Exchange(user=text, assistant="", intent="rag_search", query=text))
        queries: dict[int, str] = {}  # history position → Hark's query for that question
        done = 0
        for it in turns:
            for i, (q, a) in enumerate(it.history[done:], done):
                session.remember(Exchange(user=q, assistant=a, intent="rag_search", query=queries.get(i, q)))
            done = len(it.history)
            question = rewrite_question(it.question, session.memory, rewriter)
            queries[done] = question.query
            conversation = " ".join([it.title, it.section] + [f"{q} {a}" for q, a in it.history])
            method = question.rewrite.method if question.rewrite else "none"
            rows.append(score(it, question.query, method, conversation))
    return rows


def score(it: Item, query: str, method: str, conversation: str) -> Row:
    q, r, h, conv = (set(content_words(t)) for t in (it.question, it.rewrite, query, conversation))
    wanted = (r - q) & conv
    added = h - q
    alone = same(query, it.question) if same(it.question, it.rewrite) else None
    return Row(it.dialog, it.turn, kind_of(it.question, it.rewrite), it.question, it.rewrite, query, method,
               len(wanted), len(wanted & h), len(added), len(added & r), alone)  # fmt: skip


def summarise(rows: list[Row]) -> dict[str, Any]:
    def part(rs: list[Row]) -> dict[str, Any]:
        wanted, held = sum(r.wanted for r in rs), sum(r.held for r in rs)
        added, right = sum(r.added for r in rs), sum(r.right for r in rs)
        alone = [r.left_alone for r in rs if r.left_alone is not None]
        return {
            "n": len(rs),
            "resolution": round(held / wanted, 4) if wanted else None,
            "precision": round(right / added, 4) if added else None,
            "left_alone": round(sum(alone) / len(alone), 4) if alone else None,
            "changed": sum(not same(r.query, r.question) for r in rs),
        }

    out = part(rows)
    out["kinds"] = {k: part([r for r in rows if r.kind == k]) for k in KINDS}
    out["methods"] = {m: sum(r.method == m for r in rows) for m in ("none", "heuristic", "llm")}
    return out


def format_report(s: dict[str, Any], label: str) -> str:
    def f(v: Any) -> str:
        return "   –" if v is None else f"{v:.3f}"

    head = f"{'kind':<15}{'n':>6}{'resolution':>12}{'precision':>11}{'left alone':>12}"
    lines = [label, head, "-" * len(head)]
    for k, p in [*s["kinds"].items(), ("all", s)]:
        lines.append(f"{k:<15}{p['n']:>6}{f(p['resolution']):>12}{f(p['precision']):>11}{f(p['left_alone']):>12}")
    lines.append("rewrites by: " + ", ".join(f"{m} {n}" for m, n in s["methods"].items()))
    return "\n".join(lines)


def eval_followups_command(cfg: Any, file: Path, json_out: str | None, *, half: str = "all",
                           llm: str | None = None, check: bool = True) -> int:  # fmt: skip
    """`python launch.py eval followups --file F [--half H] [--json OUT] [--llm URL]`."""
    from assistant.components import Components
    from assistant.config import ProviderSettings

    items = half_of(read_items(Path(file)), half)
    if not items:
        raise HarkError(f"no follow-up questions in {file} ({half} half)", "check the file and --half")
    if llm:
        cfg = cfg.model_copy(deep=True)
        cfg.llm.order = ["eval"]
        cfg.llm.providers = {"eval": ProviderSettings(kind="openai_compatible", model="rewrite", base_url=llm)}
    parts = Components(cfg)
    rewriter = FollowUpRewriter(parts.complete, parts.llm_available, check=check)
    rows = replay(items, lambda: Session.from_config(cfg), rewriter)
    s = summarise(rows)
    print(format_report(s, f"{Path(file).name}, {half} half, {len(rows)} questions"
                           + (f", LLM {llm}" if llm else ", offline") + ("" if check else ", unchecked")))  # fmt: skip
    if json_out:
        keep = ("question", "rewrite", "query", "kind", "method", "dialog", "turn")
        out = {**s, "rows": [{k: v for k, v in asdict(r).items() if k in keep} for r in rows]}
        Path(json_out).write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0
