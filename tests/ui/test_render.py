"""Renderers: citations link to the right source card, every document value is escaped, the rerank
picture draws what moved, the status never shows a key."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from assistant.events import IntentEvent, Rewritten
from knowledge.types import Hit
from ui.render import anchor_id, link_citations, meta_markdown, sources_html, status_markdown
from ui.rerank_chart import rerank_rows, rerank_summary, rerank_svg


def _hit(i: int, first: int, diffusion: float | None = 0.1, text: str = "") -> Hit:
    return Hit(
        chunk_id=f"c{i}",
        source_path=f"docs/file{i}.pdf",
        title=f"Doc {i}",
        chunk_text=text or f"chunk number {i} " * 30,
        score=1.0 - i / 100,
        dense_score=0.9 - i / 100,
        diffusion_score=diffusion,
        first_stage_rank=first,
        pages=[i, i + 1] if i % 2 else [i],
    )


def test_citations_link_to_the_cards_of_the_same_answer():
    text = "Rent is due monthly [1]. The deposit is two months [2]; see [7] and [link](http://x)."
    out = link_citations(text, turn=3, n_sources=2)
    targets = re.findall(r'href="#([^"]+)"', out)
    assert targets == [anchor_id(3, 1), anchor_id(3, 2)]
    assert "[7]" in out and "[link](http://x)" in out  # out-of-range and real links untouched
    cited = [_hit(1, 4), _hit(2, 1)]
    panel = sources_html(cited + [_hit(3, 2)], turn=3, cited=cited)
    for t in targets:
        assert f'id="{t}"' in panel


def test_sources_panel_shows_scores_pages_and_escapes_everything():
    evil = _hit(1, 1, text="<script>alert(1)</script> & more text")
    evil.title = "<img src=x onerror=alert(1)>"
    evil.source_path = "../../etc/<passwd>"
    panel = sources_html([evil], turn=1, cited=[evil])
    assert "<script>" not in panel and "<img" not in panel
    assert "&lt;script&gt;" in panel and "&lt;img src=x" in panel
    assert "pp. 1–2" in panel and "Open page 1" in panel
    # scores, the path and the full chunk wait behind "Details"; the card itself is plain
    head, details = panel.split('<details class="hark-details">', 1)
    assert "dense" not in head and "diffusion" not in head
    assert "dense 0.890" in details and "diffusion 0.100" in details and "Details" in details
    # well-formed markup (every tag closed) so the browser shows it as one card
    ET.fromstring(panel)


def test_uncited_hits_are_listed_as_retrieved_and_capped():
    hits = [_hit(i, i) for i in range(1, 12)]
    panel = sources_html(hits, turn=2, cited=[hits[4]], max_other=3)
    assert panel.count('class="hark-source cited"') == 1
    assert panel.count('class="hark-source"') == 3
    assert "3 more retrieved, not cited" in panel
    assert sources_html([], turn=1).startswith('<div class="hark-sources empty"')


def test_rerank_picture_joins_first_stage_and_final_order():
    candidates = [_hit(i, i, diffusion=0.01 * (10 - i)) for i in range(1, 9)]
    final = [candidates[2], candidates[0], candidates[1], candidates[5]]  # #3 promoted to the top
    rows = {r.chunk_id: r for r in rerank_rows(candidates, final, cited=[candidates[2]])}
    assert (rows["c3"].first_rank, rows["c3"].final_rank, rows["c3"].cite_n) == (3, 1, 1)
    assert rows["c8"].final_rank is None  # dropped from the final list
    svg = rerank_svg(candidates, final, cited=[candidates[2]])
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}g")) == 8  # one line per candidate
    cited = root.findall(f"{ns}g[@class='cited']")
    assert len(cited) == 1 and "Doc 3" in cited[0].find(f"{ns}title").text
    summary = rerank_summary(candidates, final, cited=[candidates[2]])
    assert "[1] from first-stage #3" in summary
    assert "changed 4 of the top 4" in summary


def test_rerank_off_is_said_not_hidden():
    cands = [_hit(i, i, diffusion=None) for i in range(1, 4)]
    assert "rerank off" in rerank_svg(cands, cands)
    assert rerank_svg([], []) == ""


def test_meta_line_is_discreet_and_shows_the_rewrite_only_when_different():
    intent = IntentEvent("rag_search", 0.91)
    assert meta_markdown(intent, Rewritten("and his wife?", "and his wife?")) == (
        "intent `rag_search` (0.91, classifier)"
    )
    line = meta_markdown(intent, Rewritten("and his wife?", "who is Obama's wife?"))
    assert "searched for: `who is Obama's wife?`" in line


def test_status_shows_fallback_warning_and_provider_names_only():
    status = {
        "embedder": {
            "identity": "minilm",
            "is_fallback": True,
            "fallback_reason": "CLIP weights unavailable",
        },
        "providers": [("gemini", False), ("openai", True)],
        "models_loaded": ["embedder", "whisper tiny.en"],
        "chunks": 42,
    }
    md = status_markdown(status)
    assert "Offline fallback in use" in md and "CLIP weights unavailable" in md
    assert "gemini —" in md and "openai ✅" in md and "Answer providers" in md
    assert "**Chunks indexed:** 42" in md
