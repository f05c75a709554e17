"""The conversation of one browser tab as Markdown and as JSON: each question, its answer, and the
sources the answer cites (title, file, page, section, the passage)."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from knowledge.types import Hit

PASSAGE_CHARS = 600


def _where(hit: Hit) -> str:
    bits = [hit.source_path]
    if hit.page_label:
        bits.append(hit.page_label)
    if hit.section and hit.section != hit.title:
        bits.append(f"section “{hit.section}”")
    return ", ".join(bits)


def _turns(turns: list[Any]) -> list[Any]:
    return [t for t in turns if t.answer is not None]


def conversation_markdown(turns: list[Any], when: float | None = None) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(when or time.time()))
    out = [f"# Hark conversation, {stamp}", ""]
    for t in _turns(turns):
        out += [f"## {t.number}. {t.question or '(no question recognised)'}", "", t.answer.text.strip(), ""]
        if t.answer.cited:
            out += ["Sources:", ""]
            out += [f"{n}. {h.title or h.source_path} ({_where(h)})" for n, h in enumerate(t.answer.cited, 1)]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def conversation_json(turns: list[Any], when: float | None = None) -> dict[str, Any]:
    return {
        "exported": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(when or time.time())),
        "turns": [
            {
                "number": t.number,
                "question": t.question,
                "answer": t.answer.text,
                "provider": t.answer.provider,
                "not_known": bool(t.answer.not_known),
                "cited": [
                    {
                        "n": n,
                        "title": h.title,
                        "source_path": h.source_path,
                        "pages": list(h.pages),
                        "section": h.section,
                        "chunk_id": h.chunk_id,
                        "passage": h.chunk_text[:PASSAGE_CHARS],
                    }
                    for n, h in enumerate(t.answer.cited, 1)
                ],
            }
            for t in _turns(turns)
        ],
    }


def export_files(turns: list[Any]) -> list[str]:
    """The conversation written to a new temporary folder: [markdown path, json path]."""
    now = time.time()
    folder = Path(tempfile.mkdtemp(prefix="hark-export-"))
    name = "hark-conversation-" + time.strftime("%Y%m%d-%H%M", time.localtime(now))
    md = folder / f"{name}.md"
    md.write_text(conversation_markdown(turns, now), encoding="utf-8")
    js = folder / f"{name}.json"
    js.write_text(json.dumps(conversation_json(turns, now), ensure_ascii=False, indent=2), encoding="utf-8")
    return [str(md), str(js)]
