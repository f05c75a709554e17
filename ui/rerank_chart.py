"""The rerank picture: a slope chart from first-stage rank (left) to final rank (right), as SVG.

Each line is one candidate chunk; a line that climbs was promoted by the diffusion rerank, one
that falls was demoted. The dot on the right is sized by the diffusion score; cited chunks are
drawn in the accent colour with their citation number. A person sees at a glance whether the
rerank changed anything and where the cited evidence came from.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.types import Hit

ACCENT = "#e8710a"
UP = "#1a73e8"
DOWN = "#9aa0a6"


@dataclass(frozen=True)
class Row:
    """One candidate's journey through the rerank (ranks are 1-based; None = not in that list)."""

    chunk_id: str
    title: str
    first_rank: int | None
    final_rank: int | None
    diffusion: float | None
    dense: float | None
    cite_n: int | None  # citation number in the answer, if cited


def rerank_rows(candidates: Sequence[Hit], hits: Sequence[Hit], cited: Sequence[Hit] = ()) -> list[Row]:
    """Join the first-stage pool and the final order by chunk id."""
    cite_n = {h.chunk_id: i for i, h in enumerate(cited, 1)}
    final = {h.chunk_id: i for i, h in enumerate(hits, 1)}
    by_id: dict[str, Hit] = {}
    first: dict[str, int] = {}
    for i, h in enumerate(candidates, 1):
        by_id.setdefault(h.chunk_id, h)
        first.setdefault(h.chunk_id, h.first_stage_rank or i)
    for h in hits:
        by_id.setdefault(h.chunk_id, h)
        if h.chunk_id not in first and h.first_stage_rank:
            first[h.chunk_id] = h.first_stage_rank
    rows = []
    for cid, h in by_id.items():
        fh = next((x for x in hits if x.chunk_id == cid), h)
        rows.append(
            Row(
                chunk_id=cid,
                title=h.title or h.source_path,
                first_rank=first.get(cid),
                final_rank=final.get(cid),
                diffusion=fh.diffusion_score if fh.diffusion_score is not None else h.diffusion_score,
                dense=fh.dense_score if fh.dense_score is not None else h.dense_score,
                cite_n=cite_n.get(cid),
            )
        )
    return rows


def rerank_svg(
    candidates: Sequence[Hit], hits: Sequence[Hit], cited: Sequence[Hit] = (), depth: int = 15
) -> str:
    """SVG slope chart of the top `depth` ranks before and after the rerank ('' without hits)."""
    rows = rerank_rows(candidates, hits, cited)
    if not rows:
        return ""
    shown = [
        r
        for r in rows
        if (r.first_rank is not None and r.first_rank <= depth)
        or (r.final_rank is not None and r.final_rank <= depth)
    ]
    n = max(
        [r.first_rank for r in shown if r.first_rank and r.first_rank <= depth]
        + [r.final_rank for r in shown if r.final_rank and r.final_rank <= depth]
        + [1]
    )
    row_h, top, left_x, right_x, width = 16, 34, 70, 230, 380
    below_y = top + n * row_h + 8
    height = below_y + 30
    max_diff = max((r.diffusion for r in shown if r.diffusion is not None), default=0.0) or 1.0
    has_diffusion = any(r.diffusion is not None for r in shown)

    def y(rank: int | None) -> float:
        return below_y if rank is None or rank > depth else top + (rank - 0.5) * row_h

    e = html.escape
    out = [
        f'<svg class="hark-rerank" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="100%" role="img" aria-label="rank before and after the rerank">',
        f'<text x="{left_x}" y="14" text-anchor="middle" font-size="11" fill="#5f6368">first stage</text>',
        f'<text x="{right_x}" y="14" text-anchor="middle" font-size="11" fill="#5f6368">after rerank</text>',
        f'<text x="{left_x}" y="{below_y + 4}" text-anchor="end" font-size="9" fill="#9aa0a6" dx="-8">'
        f"&gt;{depth}</text>",
    ]
    for k in range(1, n + 1):
        out.append(
            f'<text x="{left_x - 8}" y="{y(k) + 3}" text-anchor="end" font-size="9" fill="#9aa0a6">{k}</text>'
        )
    # draw uncited first, cited on top
    for r in sorted(shown, key=lambda r: r.cite_n is not None):
        y1, y2 = y(r.first_rank), y(r.final_rank)
        if r.cite_n is not None:
            colour, sw, op = ACCENT, 2.6, 1.0
        elif r.final_rank is not None and r.first_rank is not None and r.final_rank < r.first_rank:
            colour, sw, op = UP, 1.4, 0.8
        else:
            colour, sw, op = DOWN, 1.0, 0.6
        tip = e(
            f"{r.title} — first stage #{r.first_rank or '–'} → #{r.final_rank or 'dropped'}; "
            f"dense {r.dense if r.dense is None else round(r.dense, 3)}, "
            f"diffusion {r.diffusion if r.diffusion is None else round(r.diffusion, 4)}"
        )
        radius = 2.5 + 6.0 * ((r.diffusion or 0.0) / max_diff if has_diffusion else 0.3)
        cls = "cited" if r.cite_n is not None else "cand"
        out.append(f'<g class="{cls}"><title>{tip}</title>')
        out.append(
            f'<line x1="{left_x}" y1="{y1:.1f}" x2="{right_x}" y2="{y2:.1f}" stroke="{colour}" '
            f'stroke-width="{sw}" opacity="{op}"/>'
        )
        out.append(f'<circle cx="{left_x}" cy="{y1:.1f}" r="2.5" fill="{colour}" opacity="{op}"/>')
        if r.final_rank is not None and r.final_rank <= depth:
            out.append(
                f'<circle cx="{right_x}" cy="{y2:.1f}" r="{radius:.1f}" fill="{colour}" opacity="{op}"/>'
            )
        if r.cite_n is not None:
            label = e(f"[{r.cite_n}] {r.title[:18]}")
            out.append(
                f'<text x="{right_x + 12}" y="{y2 + 3:.1f}" font-size="10" fill="{ACCENT}">{label}</text>'
            )
        out.append("</g>")
    note = "dot size = diffusion score" if has_diffusion else "rerank off: first-stage order kept"
    out.append(
        f'<text x="{width / 2}" y="{height - 6}" text-anchor="middle" font-size="10" fill="#5f6368">'
        f"{note} · orange = cited · blue = promoted</text>"
    )
    out.append("</svg>")
    return "".join(out)


def rerank_summary(candidates: Sequence[Hit], hits: Sequence[Hit], cited: Sequence[Hit] = ()) -> str:
    """One sentence under the picture: how much the rerank moved and where the cited chunks came from."""
    rows = [r for r in rerank_rows(candidates, hits, cited) if r.final_rank is not None]
    if not rows:
        return ""
    moved = sum(1 for r in rows if r.first_rank is not None and r.first_rank != r.final_rank)
    top = min(10, len(rows))
    moved_top = sum(1 for r in rows if r.final_rank <= top and r.first_rank != r.final_rank)
    text = f"The rerank changed {moved_top} of the top {top} positions ({moved} of {len(rows)} overall)."
    came = sorted((r.cite_n, r.first_rank) for r in rows if r.cite_n is not None)
    if came:
        text += " Cited: " + ", ".join(f"[{n}] from first-stage #{fr or '?'}" for n, fr in came) + "."
    return text
