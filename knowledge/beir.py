"""BEIR-layout datasets: `corpus.jsonl`, `queries.jsonl`, `qrels/<split>.tsv`.

Also the mapping between corpus documents and the files Hark indexes for them: one UTF-8 `.txt` file
per document (title, blank line, text), named by the percent-encoded document id so the id is
recoverable from a hit's `source_path`.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path, PurePath
from urllib.parse import quote, unquote

from models.runtime.errors import HarkError

DOC_SUFFIX = ".txt"


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    text: str


@dataclass
class BeirDataset:
    name: str
    path: Path
    corpus: list[Document]
    queries: dict[str, str]  # query id → text, only queries that have judgements
    qrels: dict[str, dict[str, int]]  # query id → {doc id: relevance}

    def canonical_ids(self) -> dict[str, str]:
        """doc id → the id of the first document with the same normalised text.

        Hark's ingestion stores a text once (deduplication on the normalised text), so of two
        documents that differ only in case, punctuation or spacing one is not indexed. Evaluation
        maps both the run and the qrels through this, so a duplicate counts as its twin."""
        from knowledge.chunking import normalise_text

        first: dict[str, str] = {}
        return {d.doc_id: first.setdefault(normalise_text(doc_file_text(d)), d.doc_id) for d in self.corpus}

    def canonical_qrels(self) -> dict[str, dict[str, int]]:
        canon = self.canonical_ids()
        out: dict[str, dict[str, int]] = {}
        for q, rels in self.qrels.items():
            merged: dict[str, int] = {}
            for d, r in rels.items():
                c = canon.get(d, d)
                merged[c] = max(r, merged.get(c, r))
            out[q] = merged
        return out

    def fingerprint(self) -> str:
        """A short hash of the corpus content (cache key part)."""
        h = hashlib.sha256()
        for d in self.corpus:
            h.update(d.doc_id.encode())
            h.update(b"\0")
            h.update(d.title.encode())
            h.update(b"\0")
            h.update(d.text.encode())
            h.update(b"\1")
        return h.hexdigest()[:16]


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise HarkError(f"{path}:{n}: not valid JSON ({exc.msg})") from exc
    return rows


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """`query-id<TAB>corpus-id<TAB>score` with a header line; scores ≤ 0 are kept (ranx ignores them)."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t")
        for n, row in enumerate(reader, 1):
            if not row or (n == 1 and not row[-1].strip().lstrip("-").isdigit()):
                continue  # blank line or header
            if len(row) < 3:
                raise HarkError(f"{path}:{n}: expected query-id, corpus-id, score")
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    return qrels


def load_beir(path: Path, split: str = "test") -> BeirDataset:
    path = Path(path)
    files = {
        "corpus": path / "corpus.jsonl",
        "queries": path / "queries.jsonl",
        "qrels": path / "qrels" / f"{split}.tsv",
    }
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise HarkError(
            f"{path} is not a BEIR-layout dataset (missing {', '.join(missing)})",
            "expected corpus.jsonl, queries.jsonl and qrels/test.tsv",
        )
    corpus = [
        Document(str(r["_id"]), str(r.get("title") or ""), str(r.get("text") or ""))
        for r in _read_jsonl(files["corpus"])
    ]
    qrels = read_qrels(files["qrels"])
    queries = {str(r["_id"]): str(r["text"]) for r in _read_jsonl(files["queries"]) if str(r["_id"]) in qrels}
    qrels = {q: rel for q, rel in qrels.items() if q in queries}
    return BeirDataset(path.name, path, corpus, queries, qrels)


def doc_filename(doc_id: str) -> str:
    return quote(doc_id, safe="") + DOC_SUFFIX


def doc_id_from_path(source_path: str) -> str:
    name = PurePath(source_path).name
    return unquote(name[: -len(DOC_SUFFIX)] if name.endswith(DOC_SUFFIX) else name)


def doc_file_text(doc: Document) -> str:
    """Title and text, as the baselines embed them (title + text)."""
    return f"{doc.title}\n\n{doc.text}\n" if doc.title else f"{doc.text}\n"


def write_corpus(dataset: BeirDataset, folder: Path) -> int:
    """Write one file per document into `folder` (unchanged files are left alone). Returns the count."""
    folder.mkdir(parents=True, exist_ok=True)
    for doc in dataset.corpus:
        target = folder / doc_filename(doc.doc_id)
        text = doc_file_text(doc)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    return len(dataset.corpus)
