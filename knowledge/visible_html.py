"""What a reader of an HTML page actually sees: the page before partitioning, without scripts,
styles, templates and hidden elements (text hidden from the reader must not become evidence)."""

from __future__ import annotations

import re
from typing import Any

_HIDDEN_TAGS = ("script", "style", "template", "noscript")
_HIDDEN_STYLE = re.compile(r"(display\s*:\s*none|visibility\s*:\s*hidden)", re.IGNORECASE)


def visible_html(text: str) -> str:
    """The HTML without what a reader never sees: scripts, styles, templates, hidden elements.

    Removes script/style/template/noscript elements, comments, elements with the `hidden` attribute,
    `aria-hidden="true"`, or an inline style `display:none` / `visibility:hidden` (with their
    children). Text that follows a removed element (its tail) is kept.
    """
    from lxml import etree
    from lxml import html as lxml_html

    try:
        root = lxml_html.document_fromstring(text)
    except (etree.ParserError, ValueError):
        return text
    doomed = [el for el in root.iter() if _is_hidden(el)]
    for el in doomed:
        parent = el.getparent()
        if parent is None or not _attached(el, root):
            continue
        el.drop_tree()  # keeps the tail text
    return lxml_html.tostring(root, encoding="unicode")


def _is_hidden(el: Any) -> bool:
    tag = el.tag if isinstance(el.tag, str) else ""
    if not tag:  # comments and processing instructions
        return True
    if tag.lower() in _HIDDEN_TAGS:
        return True
    if el.get("hidden") is not None:
        return True
    if (el.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return bool(_HIDDEN_STYLE.search(el.get("style") or ""))


def _attached(el: Any, root: Any) -> bool:
    node = el
    while node is not None:
        if node is root:
            return True
        node = node.getparent()
    return False
