"""Hark's persona: refusals and answers about itself, decided before retrieval or any LLM call.

Rules live in `assistant/persona.yaml` (regular expressions). Refusals (credentials, the system
prompt, personal data, jailbreak phrasing) are checked first; then configured answers ("what can
you do?", "what are your limitations?"); then README questions, answered from the matching
`## ` section of Hark's own README.md, parsed once when the persona loads.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_RULES = PACKAGE_DIR / "persona.yaml"
DEFAULT_README = PACKAGE_DIR.parent / "README.md"

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


def normalise(text: str) -> str:
    return " ".join((text or "").translate(_QUOTES).split()).strip()


@dataclass(frozen=True)
class PersonaReply:
    kind: Literal["refusal", "about"]
    topic: str  # the refusal category or the about/readme topic
    text: str


@dataclass
class _Rule:
    topic: str
    patterns: list[re.Pattern[str]]
    answer: str = ""
    unless: list[re.Pattern[str]] = field(default_factory=list)
    section: str = ""

    def matches(self, text: str) -> bool:
        if not any(p.search(text) for p in self.patterns):
            return False
        return not any(u.search(text) for u in self.unless)


def _compile(items: list[str] | None, where: str) -> list[re.Pattern[str]]:
    out = []
    for pat in items or []:
        try:
            out.append(re.compile(pat, re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"persona rules: bad pattern in {where}: {pat!r} ({exc})") from exc
    return out


def parse_readme_sections(markdown: str) -> dict[str, str]:
    """`## Heading` → the text under it (up to the next `## ` heading), keyed by lower-case heading."""
    sections: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    in_code = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        if not in_code and re.match(r"^##\s+\S", line) and not line.startswith("###"):
            if current is not None:
                sections[current] = "\n".join(lines).strip()
            current = line[2:].strip().strip("#").strip().lower()
            lines = []
        elif not in_code and re.match(r"^#\s+\S", line):
            if current is not None:
                sections[current] = "\n".join(lines).strip()
            current, lines = None, []
        elif current is not None:
            lines.append(line)
    if current is not None:
        sections[current] = "\n".join(lines).strip()
    return sections


class Persona:
    """Decides whether a question is answered by the persona. Immutable after loading; thread-safe."""

    def __init__(self, rules_path: Path = DEFAULT_RULES, readme_path: Path | None = DEFAULT_README) -> None:
        raw = yaml.safe_load(Path(rules_path).read_text(encoding="utf-8")) or {}
        self._refusals = [self._rule(r, "refusals") for r in raw.get("refusals", [])]
        self._about = [self._rule(r, "about") for r in raw.get("about", [])]
        self._readme_rules = [self._rule(r, "readme") for r in raw.get("readme", [])]
        self._readme_missing = str(raw.get("readme_missing", "")).strip()
        self.sections: dict[str, str] = {}
        if readme_path is not None and Path(readme_path).is_file():
            self.sections = parse_readme_sections(Path(readme_path).read_text(encoding="utf-8"))
        else:
            log.warning("README not found at %s; README questions get a short fallback answer", readme_path)

    @staticmethod
    def _rule(raw: dict, where: str) -> _Rule:
        topic = str(raw.get("category") or raw.get("topic") or "")
        return _Rule(
            topic=topic,
            patterns=_compile(raw.get("patterns"), f"{where}/{topic}"),
            answer=str(raw.get("answer", "")).strip(),
            unless=_compile(raw.get("unless"), f"{where}/{topic}"),
            section=str(raw.get("section", "")),
        )

    def section(self, heading: str) -> str | None:
        """The README section whose heading starts with `heading` (case-insensitive)."""
        key = heading.lower().strip()
        if key in self.sections:
            return self.sections[key]
        for name, text in self.sections.items():
            if name.startswith(key):
                return text
        return None

    def check(self, question: str) -> PersonaReply | None:
        """A persona reply for `question`, or None when the normal pipeline should answer it."""
        text = normalise(question)
        if not text:
            return None
        for rule in self._refusals:
            if rule.matches(text):
                log.info("persona: refused a %s request", rule.topic)
                return PersonaReply("refusal", rule.topic, rule.answer)
        for rule in self._about:
            if rule.matches(text):
                return PersonaReply("about", rule.topic, rule.answer)
        for rule in self._readme_rules:
            if rule.matches(text):
                body = self.section(rule.section)
                if not body:
                    return PersonaReply("about", rule.topic, self._readme_missing)
                return PersonaReply("about", rule.topic, body)
        return None
