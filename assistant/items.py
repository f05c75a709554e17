"""The item of the last answer a follow-up points at: "the second one", "number 3", "the last
option" pick from the answer's numbered or bulleted list, or from its sources."""

from __future__ import annotations

import re

from assistant.memory import CITATION, Exchange

ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "last": -1,
}  # fmt: skip
_ORDINAL = re.compile(
    r"\b(the|that|this)\s+(?P<n>"
    + "|".join(ORDINALS)
    + r")(\s+(one|item|point|option|source|result|step|thing))?\b",
    re.I,
)
_NUMBER = re.compile(r"\b(number|item|point|option|step|source)\s+(?P<n>\d{1,2})\b", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:(?:\d{1,2}|[a-z])[.)]|[-*•])\s+(?P<item>.+)$", re.M)
_INLINE_ITEM = re.compile(r"(?:^|\s)\(?(\d{1,2})[.)]\s+(.+?)(?=\s+\(?\d{1,2}[.)]\s+|$)")


def list_items(answer: str) -> list[str]:
    items = [m.group("item").strip() for m in _LIST_ITEM.finditer(answer or "")]
    if len(items) < 2:
        inline = [m.group(2).strip() for m in _INLINE_ITEM.finditer(" ".join((answer or "").split()))]
        if len(inline) >= 2:
            items = inline
    return [CITATION.sub("", it).strip().rstrip(".;,") for it in items]


def pick_item(q: str, last: Exchange) -> str:
    """The item `q` names by its place in `last` ('' when it names none or there is no such item)."""
    m = _ORDINAL.search(q)
    number = None if m else _NUMBER.search(q)
    if m is None and number is None:
        return ""
    n = ORDINALS[m.group("n").lower()] if m else int(number.group("n"))  # type: ignore[union-attr]
    noun = (m.group(0) if m else "").lower()
    pools = [list_items(last.assistant), list(last.sources)]
    if "source" in noun or "result" in noun:
        pools.reverse()
    for pool in pools:
        if pool and (n == -1 or 1 <= n <= len(pool)):
            return " ".join(pool[n - 1 if n > 0 else -1].split()[:30])
    return ""
