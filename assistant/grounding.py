"""Grounding: is there evidence worth asking about, is it relevant, and what does the answer cite.

- `has_evidence`: no evidence, a retrieval that says "not relevant", or (when given) no hit with a
  dense cosine at or above `min_score` → the caller answers NOT_KNOWN without any LLM call.
- `parse_relevance`: the YES/NO of the optional LLM relevance check (None = no verdict).
- `CitationRewriter`: works on the stream. Citations `[n]` / `[n, m]` to no context block are
  removed (with the space before them); the others are renumbered 1..k in order of first
  citation, and `cited` lists the original block numbers in that order. Text is held back only
  while a `[` may still turn into a citation, so the first token is not delayed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from assistant.events import NOT_KNOWN
from knowledge.types import Hit

_CITE = re.compile(r"\[\s*(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\s*\]")
_PARTIAL = re.compile(r"\[[\d\s,;]*$")
_MAX_PENDING = 48


def has_evidence(evidence: Sequence[Hit], relevant: bool = True, min_score: float | None = None) -> bool:
    if not evidence or not relevant:
        return False
    if min_score is None:
        return True
    dense = [h.dense_score for h in evidence if h.dense_score is not None]
    # web results carry no dense score: only documents are held to the threshold
    return not dense or len(dense) < len(evidence) or max(dense) >= min_score


def parse_relevance(reply: str | None) -> bool | None:
    if not reply:
        return None
    word = re.sub(r"[^a-z]", " ", reply.lower()).split()
    if not word:
        return None
    if word[0] in ("yes", "y"):
        return True
    if word[0] in ("no", "n"):
        return False
    return None


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(text.lower().split())


_NOT_KNOWN_NORM = _norm(NOT_KNOWN).rstrip(".")


def is_not_known(text: str) -> bool:
    """The answer is (or contains) the exact not-known sentence."""
    return _NOT_KNOWN_NORM in _norm(text)


def after_marker(text: str, marker: str | None) -> str:
    """The final answer of a reasoning strategy: the text after the last `marker` (or all of it)."""
    if not marker:
        return text
    idx = text.rfind(marker)
    return text[idx + len(marker) :].strip() if idx >= 0 else text


def tidy(text: str) -> str:
    """Spaces before a punctuation mark that ends a word dropped ("rise ." → "rise."), not before one
    that starts a name (".ly files", ".bashrc")."""
    text = re.sub(r"[ \t]+([.,;:!?])(?=\s|$|[\"'”’)\]])", r"\1", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


class CitationRewriter:
    """Streaming citation filter for one answer over `n_blocks` numbered context blocks."""

    def __init__(self, n_blocks: int) -> None:
        self.n_blocks = n_blocks
        self._map: dict[int, int] = {}  # original block number → new number
        self._buf = ""
        self._ws = ""  # trailing whitespace held until we know whether a dropped citation follows
        self._out: list[str] = []

    @property
    def cited(self) -> list[int]:
        """Original block numbers (1-based) in the order the answer first cites them."""
        return list(self._map)

    @property
    def text(self) -> str:
        return "".join(self._out)

    def cited_hits(self, blocks: Sequence[Hit]) -> list[Hit]:
        return [blocks[n - 1] for n in self.cited]

    def feed(self, chunk: str) -> str:
        self._buf += chunk
        return self._drain(final=False)

    def finish(self) -> str:
        out = self._drain(final=True)
        return out + self._record(self._release_ws())

    def rewrite(self, text: str) -> str:
        """Whole-text convenience: feed + finish."""
        return self.feed(text) + self.finish()

    # ------------------------------------------------------------------ internals
    def _drain(self, final: bool) -> str:
        out: list[str] = []
        while self._buf:
            i = self._buf.find("[")
            if i < 0:
                out.append(self._text(self._buf))
                self._buf = ""
                break
            if i > 0:
                out.append(self._text(self._buf[:i]))
                self._buf = self._buf[i:]
            m = _CITE.match(self._buf)
            if m:
                out.append(self._citation(m.group(1)))
                self._buf = self._buf[m.end() :]
                continue
            if not final and len(self._buf) < _MAX_PENDING and _PARTIAL.match(self._buf):
                break  # may still become a citation: wait for the next chunk
            out.append(self._release_ws() + "[")
            self._buf = self._buf[1:]
        return self._record("".join(out))

    def _record(self, s: str) -> str:
        if s:
            self._out.append(s)
        return s

    def _text(self, text: str) -> str:
        full = self._ws + text
        stripped = full.rstrip()
        self._ws = full[len(stripped) :]
        return stripped

    def _release_ws(self) -> str:
        ws, self._ws = self._ws, ""
        return ws

    def _citation(self, inner: str) -> str:
        numbers = [int(x) for x in re.findall(r"\d+", inner)]
        valid: list[int] = []
        for n in numbers:
            if 1 <= n <= self.n_blocks and n not in valid:
                valid.append(n)
        if not valid:
            self._ws = ""  # "text [9]." → "text."
            return ""
        new = [self._map.setdefault(n, len(self._map) + 1) for n in valid]
        return self._release_ws() + "[" + ", ".join(str(n) for n in new) + "]"
