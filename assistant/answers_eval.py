"""`eval answers`: questions about a folder of real documents, asked through `ask`'s code end to end.

The folder is indexed by Hark's own loaders, chunker and store (a library of its own in the cache,
keyed by the folder and the settings that decide the chunks; an unchanged file is not read again on a
rerun). Each question is one fresh-session turn of `Assistant.respond` (persona, intent, retrieval,
the "not known" decision, the answer chain: offline the extractive answer; with `--llm URL` an
OpenAI-compatible server first). The questions file is the manuals set's format (one JSON object a
line): `kind` "answerable" with `file`, `page` (1-based PDF page), `answers` (a right answer holds
one, case and Unicode NFKC aside) and optional `also_in`; `kind` "out_of_scope" with `why`.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
import time
import unicodedata
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from assistant.events import Done, Sources
from assistant.llm.asked import is_factual
from assistant.speech_text import clean
from knowledge.citations import quoted
from knowledge.sentences import split_sentences

NEAR = ("near domain", "plausible but absent")


@dataclass
class AnswerRow:
    id: str
    question: str
    kind: str
    file: str = ""
    why: str = ""
    doc_language: str = "en"
    answer: str = ""
    not_known: bool = False
    right: bool = False  # answerable: holds an answer string; out of scope: refused
    first_right: bool = False  # answerable: its first sentence holds one (what a listener hears first)
    cited: list[dict[str, Any]] = field(default_factory=list)
    cited_page_right: bool | None = None
    gold_in_context: bool | None = None
    answer_in_context: bool | None = None  # the context text an LLM is given holds an answer string
    gold_in_top5: bool | None = None
    gold_rank: int | None = None  # 1-based rank of the first hit on the gold page (None: not in the hits)
    hit_chars: list[int] = field(default_factory=list)  # each hit's text length, in rank order
    context_chars: int = 0  # what an LLM would be given (the numbered context blocks)
    sentences: int = 0
    intent: str = ""
    query: str = ""
    seconds: float = 0.0
    features: dict[str, Any] = field(default_factory=dict)
    decision: str = ""  # why the decision said what it said ("model", "unknown_term", …)


def norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def holds(text: str, answers: list[str]) -> bool:
    forms = (norm(text), norm(clean(text)))
    return any(norm(a) in f for a in answers for f in forms)


def in_half(qid: str, which: str) -> bool:
    """'select' / 'report': disjoint halves by a hash of the id (the same split as the dev sets'
    fit and report halves); 'all': every question."""
    return which == "all" or zlib.crc32(qid.encode()) % 2 == (0 if which in ("select", "fit") else 1)


def _places(q: dict[str, Any]) -> list[tuple[str, int]]:
    return [(q["file"], int(q["page"]))] + [(a["file"], int(a["page"])) for a in q.get("also_in", [])]


def _on_place(source_path: str, pages: list[int], places: list[tuple[str, int]], slack: int = 1) -> bool:
    name = Path(source_path).name
    return any(name == f and any(abs(p - page) <= slack for p in pages) for f, page in places)


def ask_one(assistant: Any, q: dict[str, Any]) -> AnswerRow:
    row = AnswerRow(q["id"], q["question"], q["kind"], q.get("file", ""), q.get("why", ""),
                    q.get("doc_language", "en"))  # fmt: skip
    session = assistant.new_session()
    t0 = time.perf_counter()
    done, hits = None, []
    for ev in assistant.respond(session, q["question"]):
        if isinstance(ev, Sources) and ev.kind == "documents":
            hits = list(ev.retrieval.hits)
        elif isinstance(ev, Done):
            done = ev
    row.seconds = time.perf_counter() - t0
    if done is None:
        return row
    a = done.answer
    row.answer, row.not_known = a.text, bool(a.not_known)
    trace = done.trace or {}
    row.intent = str((trace.get("intent") or {}).get("label", ""))
    row.query = str(trace.get("query", "") or "")
    row.features = dict((trace.get("answerability") or {}).get("features", {}) or {})
    row.decision = str((trace.get("answerability") or {}).get("reason", ""))
    row.cited = [{"file": Path(h.source_path).name, "pages": list(h.pages), "section": h.section} for h in a.cited]
    refused = a.not_known or a.provider in ("none", "speech")
    if q["kind"] == "answerable":
        places = _places(q)
        row.right = not refused and holds(a.text, [str(x) for x in q["answers"]])
        # a cited sentence ends at its marker ("… you can [1]. ordered: don't shuffle …" is two sentences,
        # though the second opens in lower case)
        cited = re.split(r"(?<=\][.!?])\s+", a.text) if not refused else []
        said = [x for piece in cited for x in split_sentences(re.sub(r"\s*\[\d+\]", "", piece))]
        row.first_right = bool(said) and holds(said[0], [str(x) for x in q["answers"]])
        if a.cited and not refused:
            first = a.cited[0]
            row.cited_page_right = _on_place(first.source_path, [_cited_page(assistant, first, a.text)], places)
        else:
            row.cited_page_right = False
        builder = assistant.parts.answerer.get().builder
        blocks = builder.blocks(hits) if hits else []
        context = builder.context(hits, q["question"]) if hits else ""
        row.context_chars = len(context)
        row.answer_in_context = holds(context, [str(x) for x in q["answers"]])
        row.gold_in_context = any(_on_place(h.source_path, h.pages, places) for h in blocks)
        row.gold_in_top5 = any(_on_place(h.source_path, h.pages, places) for h in hits[:5])
        row.gold_rank = next((i for i, h in enumerate(hits, 1) if _on_place(h.source_path, h.pages, places)), None)
        row.hit_chars = [len(h.chunk_text) for h in hits]
        row.sentences = len(said)
    else:
        row.right = refused
    return row


def _cited_page(assistant: Any, hit: Any, text: str) -> int:
    """The page "Open page" shows for the first citation: where the sentences it quotes are."""
    try:
        _path, loc = assistant.locate_source(hit, quoted(text, 1))
        if loc.page:
            return int(loc.page)
    except Exception:  # noqa: BLE001 - the chunk's first page, as the citation card says
        pass
    return hit.pages[0] if hit.pages else 0


def summarise(rows: list[AnswerRow]) -> dict[str, Any]:
    def rate(values: list[bool]) -> float | None:
        return round(sum(values) / len(values), 4) if values else None

    ans = [r for r in rows if r.kind == "answerable"]
    en = [r for r in ans if r.doc_language != "de"]
    de = [r for r in ans if r.doc_language == "de"]
    oos = [r for r in rows if r.kind != "answerable"]
    answered = [r for r in ans if r.sentences]
    per_file = {}
    for f in sorted({r.file for r in ans}):
        mine = [r for r in ans if r.file == f]
        per_file[f] = {"n": len(mine), "right": rate([r.right for r in mine]),
                       "cited_page_right": rate([bool(r.cited_page_right) for r in mine]),
                       "gold_in_context": rate([bool(r.gold_in_context) for r in mine])}  # fmt: skip
    per_why = {w: {"n": len(m), "refused": rate([r.right for r in m])}
               for w in sorted({r.why for r in oos}) for m in [[r for r in oos if r.why == w]]}  # fmt: skip
    return {
        "answerable_right": rate([r.right for r in en]),
        "first_sentence_right": rate([r.first_right for r in en]),
        "answerable_right_de": rate([r.right for r in de]),
        "answerable_right_de_asked_de": rate([r.right for r in de if _asked_de(r)]),
        "out_of_scope_refused": rate([r.right for r in oos]),
        "near_domain_refused": rate([r.right for r in oos if r.why in NEAR]),
        "false_not_known": rate([r.not_known for r in en]),
        "cited_page_right": rate([bool(r.cited_page_right) for r in en]),
        "gold_in_context": rate([bool(r.gold_in_context) for r in en]),
        "gold_in_top5": rate([bool(r.gold_in_top5) for r in en]),
        "answer_in_context": rate([bool(r.answer_in_context) for r in en]),
        "context_chars_p50": statistics.median([r.context_chars for r in en]) if en else None,
        "sentences_p50": statistics.median([r.sentences for r in answered]) if answered else None,
        "at_most_two_sentences": rate([r.sentences <= 2 for r in answered if is_factual(r.question)]),
        "seconds_p50": round(statistics.median([r.seconds for r in rows]), 3) if rows else None,
        "n_answerable": len(ans),
        "n_out_of_scope": len(oos),
        "per_file": per_file,
        "per_why": per_why,
    }


def _asked_de(r: AnswerRow) -> bool:
    return bool(re.search(r"\b(wie|was|wo|welche[rsmn]?|kann|gibt|ist|der|die|das)\b", r.question, re.I))


def library_folder(work: Path, folder: Path, cfg: Any) -> Path:
    """The cache folder of this document folder's library under these settings."""
    key = json.dumps([str(folder.resolve()), cfg.embedder.model_dump(), cfg.ingest.model_dump(
        include={"chunk_words", "overlap_words", "max_file_mb", "extensions", "ocr"})], sort_keys=True, default=str)
    return work / f"{folder.name}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def build_assistant(cfg: Any, folder: Path, work: Path, llm: str | None = None) -> Any:
    """An Assistant as `ask` builds it, on a library of its own for `folder` (indexed when new or
    changed: the incremental ingest re-reads only changed files)."""
    from assistant.assistant import Assistant
    from assistant.config import ProviderSettings

    data = library_folder(work, folder, cfg)
    data.mkdir(parents=True, exist_ok=True)
    store = cfg.store.model_copy(update={"data_dir": str(data), "uri": None})
    ingest = cfg.ingest.model_copy(update={"isolation": "inline", "auto_reindex": False})
    trace = cfg.trace.model_copy(update={"path": str(data / "traces.jsonl")})
    llm_cfg = cfg.llm
    if llm:
        providers = dict(cfg.llm.providers)
        local = providers.get("local")
        providers["local"] = (local.model_copy(update={"base_url": llm, "enabled": True}) if local is not None
                              else ProviderSettings(kind="openai_compatible", model="local", base_url=llm))  # fmt: skip
        llm_cfg = cfg.llm.model_copy(update={"order": ["local"], "providers": providers})
    else:
        llm_cfg = cfg.llm.model_copy(update={"order": []})
    new = cfg.model_copy(update={"store": store, "ingest": ingest, "trace": trace, "llm": llm_cfg})
    new._base_dir = cfg.base_dir
    assistant = Assistant(new)
    t0 = time.perf_counter()
    report = assistant.ingest([folder])
    totals = ", ".join(f"{n} {status}" for status, n in report.totals.items() if n)
    print(f"library {folder}: {totals} ({report.total_chunks} chunks, {time.perf_counter() - t0:.1f} s)", flush=True)
    return assistant


def eval_answers_command(
    cfg: Any, library: Path, questions: Path, json_out: str | None, *, which: str = "all",
    limit: int | None = None, llm: str | None = None, work_dir: Path | None = None,
) -> int:  # fmt: skip
    """`python launch.py eval answers --library FOLDER --questions FILE.jsonl`."""
    from models.weights import cache_dir

    if not library.is_dir():
        print(f"error: {library} is not a folder of documents")
        return 2
    try:
        qs = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        print(f"error: cannot read the questions file {questions}: {exc}")
        return 2
    qs = [q for q in qs if in_half(str(q["id"]), which)][: limit or None]
    work = Path(work_dir) if work_dir else cache_dir() / "eval" / "answers"
    assistant = build_assistant(cfg, library, work, llm)
    rows = []
    for i, q in enumerate(qs, 1):
        rows.append(ask_one(assistant, q))
        if i % 20 == 0:
            print(f"  {i}/{len(qs)} questions", flush=True)
    s = summarise(rows)
    print(format_summary(s))
    if json_out:
        Path(json_out).write_text(json.dumps({**s, "rows": [asdict(r) for r in rows]}, indent=1,
                                             ensure_ascii=False) + "\n", encoding="utf-8")  # fmt: skip
        print(f"wrote {json_out}")
    return 0


def format_summary(s: dict[str, Any]) -> str:
    lines = ["| file | answerable | right | first citation on the page | gold in context |", "|---|---:|---:|---:|---:|"]
    for f, v in s["per_file"].items():
        lines.append(f"| {f} | {v['n']} | {v['right']} | {v['cited_page_right']} | {v['gold_in_context']} |")
    lines.append("")
    for k in ("answerable_right", "first_sentence_right", "answerable_right_de", "answerable_right_de_asked_de", "out_of_scope_refused",
              "near_domain_refused", "false_not_known", "cited_page_right", "gold_in_context", "gold_in_top5", "answer_in_context", "context_chars_p50", "sentences_p50",
              "at_most_two_sentences", "seconds_p50", "n_answerable", "n_out_of_scope"):  # fmt: skip
        lines.append(f"{k}: {s[k]}")
    lines.append("out of scope refused by kind: " + ", ".join(f"{w} {v['refused']} (n={v['n']})" for w, v in s["per_why"].items()))
    return "\n".join(lines)
