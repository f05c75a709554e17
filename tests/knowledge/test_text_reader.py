"""Markdown and plain text read without unstructured: headings, lists, tables, code and tags, and
the same titles, tags and chunks as unstructured gives for a typical note."""

from __future__ import annotations

from pathlib import Path

from knowledge.chunking import chunk_document, normalise_text
from knowledge.loaders import elements_to_document, load_document
from knowledge.offline_nlp import ensure_offline_nlp
from knowledge.text_reader import is_heading, text_elements, text_paragraphs

NOTE = """# Boiler and heating

The boiler is serviced **every October** by [Acme Heating](https://example.com); the
service costs `120 EUR`.

## Checklist

- bleed the radiators
- check the pressure
  - between 1 and 1.5 bar
1. call the landlord first

| part | interval |
|------|----------|
| filter | 1 year |
| pump | 5 years |

```
pressure = 1.2
```

> Keep the manual in the drawer.

## Tags

home, #heating
"""


def test_markdown_sections_lists_tables_and_inline_markup(tmp_path: Path) -> None:
    p = tmp_path / "boiler.md"
    p.write_text(NOTE, encoding="utf-8")
    doc = load_document(p)
    assert doc.title == "Boiler and heating" and doc.tags == ["home", "heating"]
    by_kind: dict[str, list[str]] = {}
    for b in doc.blocks:
        by_kind.setdefault(b.kind, []).append(b.text)
    assert by_kind["text"][0] == (
        "The boiler is serviced every October by Acme Heating; the service costs 120 EUR."
    )
    assert by_kind["list_item"] == [
        "bleed the radiators",
        "check the pressure",
        "between 1 and 1.5 bar",
        "call the landlord first",
    ]
    assert by_kind["table_row"] == ["part | interval", "filter | 1 year", "pump | 5 years"]
    assert "pressure = 1.2" in by_kind["text"] and "Keep the manual in the drawer." in by_kind["text"]
    assert {b.section for b in doc.blocks if b.kind != "title"} == {"Boiler and heating", "Checklist"}
    assert not any("home" in t for t in by_kind["text"])  # the Tags section feeds tags only


def test_markdown_matches_unstructured_on_a_typical_note(tmp_path: Path) -> None:
    ensure_offline_nlp()
    from unstructured.partition.md import partition_md

    p = tmp_path / "boiler.md"
    p.write_text(NOTE, encoding="utf-8")
    ours = load_document(p)
    theirs = elements_to_document(partition_md(text=NOTE, languages=[""]), fallback_title="boiler")
    assert (ours.title, ours.tags) == (theirs.title, theirs.tags)

    def chunks(doc):  # noqa: ANN001, ANN202
        return [(normalise_text(c.chunk_text), c.section) for c in chunk_document(doc, "boiler.md", "h", 40, 10)]

    assert chunks(ours) == chunks(theirs)


def test_plain_text_paragraphs_bullets_and_headings() -> None:
    text = "Garden\n\nTomatoes need full sun\nand regular watering.\n\n• water in the morning\n• mulch in May\n\n2. stake the plants\n"
    assert text_paragraphs(text) == [
        "Garden",
        "Tomatoes need full sun and regular watering.",
        "• water in the morning",
        "• mulch in May",
        "2. stake the plants",
    ]
    kinds = [(e.category, e.text) for e in text_elements(text)]
    assert kinds == [
        ("Title", "Garden"),
        ("NarrativeText", "Tomatoes need full sun and regular watering."),
        ("ListItem", "water in the morning"),
        ("ListItem", "mulch in May"),
        ("ListItem", "2. stake the plants"),
    ]
    # few blank lines: every line is a paragraph (unstructured's rule)
    assert text_paragraphs("one line.\nanother line.\nthird line.\n") == ["one line.", "another line.", "third line."]
    assert is_heading("Opening hours") and not is_heading("Open at nine.") and not is_heading("2024")
    assert not is_heading("----- ----- -----") and not is_heading(" ".join(["word"] * 13))
