"""Pure renderers from assistant events to the HTML/Markdown the Gradio app shows.

Nothing here decides anything about an answer: it only turns `Hit`s, intents and the status
dict into escaped text. Every value coming from a document or the user is HTML-escaped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from assistant.events import IntentEvent, Rewritten
from knowledge.types import Hit

_CITE = re.compile(r"\[(\d{1,3})\](?!\()")  # [n] not already a markdown link
PREVIEW_CHARS = 160


def anchor_id(turn: int, n: int) -> str:
    """DOM id of source `n` of answer `turn` in the sources panel."""
    return f"hark-src-{turn}-{n}"


def link_citations(text: str, turn: int, n_sources: int) -> str:
    """Turn each `[n]` (1 ≤ n ≤ n_sources) into a link to that source in the sources panel."""
    if n_sources <= 0:
        return text

    def repl(m: re.Match[str]) -> str:
        n = int(m.group(1))
        if not 1 <= n <= n_sources:
            return m.group(0)
        return f'<a class="hark-cite" href="#{anchor_id(turn, n)}">[{n}]</a>'

    return _CITE.sub(repl, text)


def _fmt(score: float | None) -> str:
    return "—" if score is None else f"{score:.3f}"


def _is_url(s: str) -> bool:
    return s.startswith(("http://", "https://"))


def _source_card(hit: Hit, n: int, turn: int, cited: bool) -> str:
    """Title, page and a short preview; the scores, the path and the full chunk behind "Details"."""
    e = html.escape
    title = e(hit.title or hit.source_path or "untitled")
    src = hit.source_path or ""
    web = _is_url(src)
    src_html = (
        f'<a href="{e(src, quote=True)}" target="_blank" rel="noopener noreferrer">{e(src)}</a>'
        if web
        else f"<code>{e(src)}</code>"
    )
    section = hit.section if hit.section and hit.section != hit.title else ""
    name = "" if web else e(src.rsplit("/", 1)[-1])
    where = " · ".join(p for p in (name, e(hit.page_label), e(section)) if p)
    preview = hit.chunk_text[:PREVIEW_CHARS].strip()
    more = "…" if len(hit.chunk_text) > PREVIEW_CHARS else ""
    rank = f" · first-stage rank {hit.first_stage_rank}" if hit.first_stage_rank else ""
    cls = "hark-source cited" if cited else "hark-source"
    page = f"page {min(hit.pages)}" if hit.pages else "passage"
    opener = (
        src_html
        if web
        else f'<a class="hark-open" href="#{anchor_id(turn, n)}" title="Open {e(page)} with the passage highlighted">Open {e(page)}</a>'
    )
    return (
        f'<div class="{cls}" id="{anchor_id(turn, n)}">'
        f'<div class="hark-source-head"><span class="hark-n">[{n}]</span> <b>{title}</b></div>'
        f'<div class="hark-source-meta">{where}{" · " if where else ""}{opener}</div>'
        f'<div class="hark-preview">{e(preview)}{more}</div>'
        f'<details class="hark-details"><summary>Details</summary>'
        f'<div class="hark-source-meta">{src_html}</div>'
        f'<div class="hark-scores">dense {_fmt(hit.dense_score)} · diffusion {_fmt(hit.diffusion_score)}'
        f" · final {_fmt(hit.score)}{rank}</div>"
        f'<div class="hark-chunk">{e(hit.chunk_text)}</div></details>'
        f"</div>"
    )


def numbered_sources(hits: Sequence[Hit], cited: Sequence[Hit] | None = None, max_other: int = 5) -> list[Hit]:
    """The hits in the panel's numbering: the cited ones as in the answer, then up to `max_other` others."""
    cited = list(cited or [])
    ids = {h.chunk_id for h in cited}
    pool = [h for h in hits if h.chunk_id not in ids] if cited else list(hits)
    return cited + pool[:max_other]


def sources_html(
    hits: Sequence[Hit],
    turn: int,
    cited: Sequence[Hit] | None = None,
    kind: str = "documents",
    max_other: int = 5,
) -> str:
    """The sources panel of one answer: cited chunks numbered as in the answer, then other hits."""
    if not hits and not cited:
        return '<div class="hark-sources empty">No sources for this answer.</div>'
    cited = list(cited or [])
    cited_ids = {h.chunk_id for h in cited}
    parts = [f'<div class="hark-sources" data-turn="{turn}">']
    label = "Web results" if kind == "web" else "Sources"
    if cited:
        parts.append(f"<h4>{label} cited in answer {turn}</h4>")
        parts += [_source_card(h, i, turn, True) for i, h in enumerate(cited, 1)]
        others = [h for h in hits if h.chunk_id not in cited_ids][:max_other]
        if others:
            parts.append(
                f'<details class="hark-others"><summary>{len(others)} more retrieved, not cited</summary>'
            )
            parts += [_source_card(h, len(cited) + i, turn, False) for i, h in enumerate(others, 1)]
            parts.append("</details>")
    else:
        parts.append(f"<h4>{label} retrieved for answer {turn}</h4>")
        parts += [_source_card(h, i, turn, False) for i, h in enumerate(list(hits)[:max_other], 1)]
    parts.append("</div>")
    return "".join(parts)


def meta_markdown(intent: IntentEvent | None, rewritten: Rewritten | None) -> str:
    """One discreet line: the intent and, when the question was rewritten, the standalone query."""
    bits: list[str] = []
    if intent is not None:
        bits.append(f"intent `{intent.label}` ({intent.confidence:.2f}, {intent.source})")
    if rewritten is not None and rewritten.query.strip() != rewritten.original.strip():
        q = rewritten.query.replace("`", "'")
        bits.append(f"searched for: `{q}`")
    return " · ".join(bits)


def status_markdown(status: dict[str, Any]) -> str:
    """The status area: embedder (warning if it is the offline fallback), providers, models, chunks.

    Only names and booleans are shown: the status dict never carries keys, and nothing here
    reads the environment.
    """
    lines: list[str] = []
    emb = status.get("embedder") or {}
    if isinstance(emb, dict):
        name = emb.get("identity") or emb.get("name") or "unknown"
        lines.append(f"**Embedder:** `{name}`")
        if emb.get("is_fallback"):
            reason = emb.get("fallback_reason") or "the configured model could not be loaded"
            lines.append(f"⚠️ **Offline fallback in use:** {reason}")
    elif emb:
        lines.append(f"**Embedder:** `{emb}`")
    if status.get("warning") and not (isinstance(emb, dict) and emb.get("is_fallback")):
        lines.append(f"⚠️ {status['warning']}")
    providers = status.get("providers") or []
    if providers:
        shown = []
        for item in providers:
            name, ok = (item[0], item[1]) if isinstance(item, list | tuple) else (str(item), True)
            shown.append(f"{name} {'✅' if ok else '—'}")
        lines.append("**Answer providers:** " + ", ".join(shown))
    models = status.get("models_loaded") or status.get("models") or []
    if models:
        if isinstance(models, dict):
            models = [k for k, v in models.items() if v]
        lines.append("**Models loaded:** " + ", ".join(f"`{m}`" for m in models))
    if status.get("web_search") is not None:
        lines.append(f"**Web search:** {'available' if status['web_search'] else 'not configured'}")
    if "chunks" in status or "chunk_count" in status:
        lines.append(f"**Chunks indexed:** {status.get('chunks', status.get('chunk_count'))}")
    return "  \n".join(lines) or "Status unavailable."
