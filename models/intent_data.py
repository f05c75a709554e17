"""The synthetic intent dataset: templates × vocabulary × realistic noise, split 80/20 stratified.

Templates and vocabulary live in `intent_templates.yaml` (four labels; rag_search draws its
documents, topics and questions from one of several domains: regulations, manuals, reports,
course handbooks, contracts, encyclopedic topics). Each generated row then gets the kind of noise
people type: casual spellings ("u", "pls", "rn", "whats"), keyboard typos (swaps, drops, doubled
and neighbouring keys), filler prefixes ("ok so", "hey,") and optional punctuation; and, at the same
rate for every label, the slips of fast typing and imperfect hearing (`garble`): a stray symbol
("night watch#"), two words joined ("whatis") or one split ("curr ency"), dropped vowels ("wht",
"paintd"). Everything
is driven by one seeded `random.Random`, so a seed reproduces the same files byte for byte.

The external test file (`intent_external.csv`) is hand-written and never read here.
"""

from __future__ import annotations

import csv
import logging
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

LABELS: tuple[str, ...] = ("rag_search", "web_search", "greeting", "conversation_meta")
TEMPLATES = Path(__file__).with_name("intent_templates.yaml")
_SLOT = re.compile(r"\{(\w+)\}")

# word (or phrase) → casual spellings people actually type
_CASUAL: dict[str, tuple[str, ...]] = {
    "you": ("u", "ya"),
    "your": ("ur", "yr"),
    "you're": ("ur", "youre"),
    "are": ("r",),
    "please": ("pls", "plz", "pleas"),
    "what's": ("whats", "wats"),
    "what": ("wat", "wht"),
    "about": ("abt", "bout"),
    "thanks": ("thx", "thnx", "tnx"),
    "thank you": ("thank u", "ty"),
    "tomorrow": ("tmrw", "tmr", "tomorow"),
    "right now": ("rn", "rite now"),
    "because": ("cuz", "bc"),
    "i'm": ("im",),
    "don't": ("dont",),
    "doesn't": ("doesnt",),
    "can't": ("cant",),
    "won't": ("wont",),
    "it's": ("its",),
    "let's": ("lets",),
    "how's": ("hows",),
    "who's": ("whos",),
    "there's": ("theres",),
    "going to": ("gonna",),
    "want to": ("wanna",),
    "people": ("ppl",),
    "message": ("msg",),
    "documents": ("docs",),
    "document": ("doc",),
    "information": ("info",),
    "before": ("b4",),
    "tonight": ("tonite", "2nite"),
    "the": ("teh", "th"),
    "question": ("q", "qn"),
    "okay": ("k", "kk"),
    "something": ("smth", "sth"),
    "and": ("n", "&"),
    "hello": ("helo", "hellooo"),
    "hey": ("heyy", "hay"),
    "good": ("gud", "gd"),
    "night": ("nite",),
    "see you": ("cya", "see ya"),
    "weather": ("wether", "weathr"),
    "really": ("rly",),
    "know": ("kno",),
    "for": ("4",),
    "to": ("2",),
    "with": ("w/",),
    "summarize": ("summarise", "summerize", "sumarize"),
    "definitely": ("def",),
}
_CASUAL_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _CASUAL), key=len, reverse=True)) + r")\b")
_KEYBOARD = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
_PREFIXES = (
    "hey, ",
    "hi, ",
    "ok ",
    "ok so ",
    "so ",
    "um ",
    "hark, ",
    "btw ",
    "also ",
    "and ",
    "one more thing: ",
    "hmm ",
    "quick q: ",
    "ok next, ",
    "right, ",
    "yo ",
)
_SUFFIXES = (" please", " pls", " thanks", " thx", " asap", " real quick", " for me", " again")


@dataclass(frozen=True)
class IntentExample:
    text: str
    label: str


@dataclass(frozen=True)
class DatasetFiles:
    train: Path
    test: Path
    n_train: int
    n_test: int


def _neighbours(ch: str) -> str:
    for row in _KEYBOARD:
        i = row.find(ch)
        if i >= 0:
            return row[max(0, i - 1) : i] + row[i + 1 : i + 2]
    return ""


def _typo(word: str, rng: random.Random) -> str:
    """One keyboard slip in a word of four or more letters: swap, drop, double or neighbour key."""
    if len(word) < 4 or not word.isalpha():
        return word
    i = rng.randrange(1, len(word) - 1)
    kind = rng.choice(("swap", "drop", "double", "near"))
    if kind == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == "drop":
        return word[:i] + word[i + 1 :]
    if kind == "double":
        return word[:i] + word[i] + word[i:]
    near = _neighbours(word[i].lower())
    return word[:i] + rng.choice(near) + word[i + 1 :] if near else word


class _Filler:
    """Fills {slots} recursively from a domain's lists first, then the global ones."""

    def __init__(self, slots: dict[str, list[str]], rng: random.Random) -> None:
        self.slots = slots
        self.rng = rng

    def fill(self, template: str, domain: dict[str, list[str]] | None = None, depth: int = 0) -> str:
        if depth > 5:
            raise ValueError(f"slot recursion too deep in {template!r}")

        def one(m: re.Match[str]) -> str:
            name = m.group(1)
            pool = (domain or {}).get(name) or self.slots.get(name)
            if not pool:
                raise KeyError(f"unknown slot {{{name}}} in template {template!r}")
            return self.fill(str(self.rng.choice(pool)), domain, depth + 1)

        return _SLOT.sub(one, template)


def load_templates(path: Path = TEMPLATES) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    missing = set(LABELS) - set(spec["labels"])
    if missing:
        raise ValueError(f"{path}: no templates for {sorted(missing)}")
    return spec


_STRAY = ("#", "/", "]", ";", "'", "`", "\\", "=", "*", "?#", "?/", ".?", ",")


def garble(text: str, rng: random.Random) -> str:
    """One slip of fast typing or of speech recognition: a stray symbol, two words joined, a word
    split, or a vowel dropped (the first and last letters kept)."""
    words = text.split(" ")
    kind = rng.choice(("stray", "stray", "join", "split", "vowel", "vowel"))
    if kind == "stray":
        stray = rng.choice(_STRAY)
        if rng.random() < 0.7:
            return text.rstrip("?!.") + stray
        j = rng.randrange(len(words))
        words[j] += stray
    elif kind == "join" and len(words) >= 2:
        j = rng.randrange(len(words) - 1)
        words[j : j + 2] = [words[j] + words[j + 1]]
    elif kind == "split":
        long = [j for j, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
        if long:
            j = rng.choice(long)
            cut = rng.randrange(2, len(words[j]) - 1)
            words[j] = words[j][:cut] + " " + words[j][cut:]
    else:
        inner = [(j, k) for j, w in enumerate(words) if len(w) >= 4 for k in range(1, len(w) - 1) if w[k] in "aeiou"]
        if inner:
            j, k = rng.choice(inner)
            words[j] = words[j][:k] + words[j][k + 1 :]
    return " ".join(words)


def add_noise(text: str, label: str, rng: random.Random) -> str:
    """Casual spellings, typos, fillers, casing and punctuation, each with a realistic rate."""
    if label != "greeting" and rng.random() < 0.12:
        text = rng.choice(_PREFIXES) + text
    if label != "greeting" and rng.random() < 0.08:
        text += rng.choice(_SUFFIXES)
    if rng.random() < 0.45:
        text = _CASUAL_RE.sub(
            lambda m: rng.choice(_CASUAL[m.group(1)]) if rng.random() < 0.5 else m.group(1), text
        )
    if rng.random() < 0.3:
        text = text.replace("'", "")
    n_typos = rng.choices((0, 1, 2), weights=(0.6, 0.3, 0.1))[0]
    for _ in range(n_typos):
        words = text.split(" ")
        j = rng.randrange(len(words))
        words[j] = _typo(words[j], rng)
        text = " ".join(words)
    if rng.random() < 0.3:
        for _ in range(rng.choice((1, 1, 2))):
            text = garble(text, rng)
    r = rng.random()
    if r < 0.15:
        text = text[:1].upper() + text[1:]
    elif r < 0.18:
        text = text.upper() if len(text) < 25 else text.title()
    if label != "greeting" and not text.endswith(("?", "!", ".", *_STRAY)):
        r = rng.random()
        text += "?" if r < 0.35 else "??" if r < 0.38 else "." if r < 0.42 else ""
    return re.sub(r"\s+", " ", text).strip()


def generate(
    rows: int, seed: int, spec: dict[str, Any] | None = None, noise: bool = True
) -> list[IntentExample]:
    """`rows` unique examples (rounded up to a multiple of four), equally many per label."""
    spec = spec or load_templates()
    rng = random.Random(seed)
    filler = _Filler({k: [str(x) for x in v] for k, v in spec["slots"].items()}, rng)
    domains = {name: {k: [str(x) for x in v] for k, v in d.items()} for name, d in spec["domains"].items()}
    domain_names = sorted(domains)
    per_label = math.ceil(rows / len(LABELS))
    out: list[IntentExample] = []
    for label in LABELS:
        templates = spec["labels"][label]["templates"]
        seen: dict[str, None] = {}
        attempts = 0
        while len(seen) < per_label:
            attempts += 1
            if attempts > per_label * 200:
                raise ValueError(f"{label}: only {len(seen)} unique rows; add templates or vocabulary")
            domain = domains[rng.choice(domain_names)] if label == "rag_search" else None
            text = filler.fill(rng.choice(templates), domain)
            text = add_noise(text, label, rng) if noise else re.sub(r"\s+", " ", text).strip()
            key = text.lower()
            if key and key not in seen:
                seen[key] = None
                out.append(IntentExample(text, label))
        log.debug("%s: %d rows after %d attempts", label, per_label, attempts)
    return out


def split(
    examples: list[IntentExample], test_fraction: float = 0.2, seed: int = 42
) -> tuple[list[IntentExample], list[IntentExample]]:
    """Stratified train/test split (scikit-learn), deterministic for a seed."""
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(
        examples, test_size=test_fraction, random_state=seed, stratify=[e.label for e in examples]
    )
    return list(train), list(test)


def write_csv(examples: list[IntentExample], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["text", "label"])
        w.writerows((e.text, e.label) for e in examples)


def read_csv(path: Path) -> list[IntentExample]:
    """A `text,label` CSV; unknown labels and a missing header are user errors."""
    if not path.is_file():
        raise HarkError(f"no such CSV file: {path}", "pass a CSV with the columns text,label")
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or not {"text", "label"} <= {h.strip() for h in reader.fieldnames}:
            raise HarkError(f"{path}: expected the header text,label, found {reader.fieldnames}")
        rows = [{(k or "").strip(): (v or "") for k, v in r.items()} for r in reader]
    out: list[IntentExample] = []
    for n, r in enumerate(rows, start=2):
        label = r["label"].strip()
        if label not in LABELS:
            raise HarkError(f"{path}, line {n}: unknown label {label!r}", f"labels are {', '.join(LABELS)}")
        out.append(IntentExample(r["text"].strip(), label))
    if not out:
        raise HarkError(f"{path}: no rows")
    return out


def build_dataset(rows: int, seed: int, out_dir: Path) -> DatasetFiles:
    """Generate, split 80/20 stratified with `seed`, and write `train.csv` and `test.csv`."""
    train, test = split(generate(rows, seed), 0.2, seed)
    files = DatasetFiles(out_dir / "train.csv", out_dir / "test.csv", len(train), len(test))
    write_csv(train, files.train)
    write_csv(test, files.test)
    log.info("intent dataset: %d train, %d test rows in %s", files.n_train, files.n_test, out_dir)
    return files


if __name__ == "__main__":  # python -m models.intent_data OUT_DIR [ROWS] [SEED]
    import sys

    logging.basicConfig(level=logging.INFO)
    args = sys.argv[1:]
    build_dataset(
        int(args[1]) if len(args) > 1 else 4000,
        int(args[2]) if len(args) > 2 else 42,
        Path(args[0] if args else "data/intent"),
    )
