"""ChunkStore on a real LanceDB, in a temp folder and on a real S3 server (moto, over HTTP): search,
FTS, tables per embedder, atomic replacement, the approximate index; and write failures on a really
read-only / really full file system."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from knowledge.manifest import DocumentInfo
from knowledge.settings import StoreSettings
from knowledge.store import ChunkStore, StoreWriteError, table_name
from knowledge.types import Chunk
from models.runtime.errors import HarkError

DIM = 32


def _unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    m = rng.normal(size=(n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _chunks(sp: str, texts: list[str], version: str = "v1") -> list[Chunk]:
    return [
        Chunk(
            chunk_id=f"{sp}#{version}#{i}",
            source_path=sp,
            chunk_text=t,
            title=f"Title of {sp}",
            section="Intro",
            pages=[i + 1],
            tags=["tag-a"],
            file_hash=version,
            text_hash=f"{sp}-{version}-{i}",
        )
        for i, t in enumerate(texts)
    ]


@dataclass(frozen=True)
class Where:
    """A library location: a folder, or a prefix in the S3 server's bucket with its options."""

    uri: str
    options: dict[str, str]


@pytest.fixture(params=["folder", "s3"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Where:
    if request.param == "folder":
        return Where(str(tmp_path / "db"), {})
    s3 = request.getfixturevalue("s3")
    return Where(s3.new_uri(), s3.storage_options())


def _store(where: Where, identity: str = "test-emb", dim: int = DIM, **kw: object) -> ChunkStore:
    return ChunkStore.open(where.uri, identity, dim, StoreSettings(storage_options=where.options, **kw))


def test_dense_search_is_exact_cosine_with_metadata(where: Where) -> None:
    rng = np.random.default_rng(0)
    store = _store(where)
    vecs = _unit(rng, 40)
    files = {}
    for f in range(4):
        sp = f"docs/file{f}.md"
        files[sp] = (_chunks(sp, [f"text {f}-{i}" for i in range(10)]), vecs[f * 10 : (f + 1) * 10])
    store.replace_files(files)
    q = _unit(rng, 1)[0]
    hits = store.search(q, 5)
    expected = np.argsort(-(vecs @ q))[:5]
    assert [h.chunk_text for h in hits] == [f"text {i // 10}-{i % 10}" for i in expected]
    for h, i in zip(hits, expected, strict=True):
        assert h.dense_score == pytest.approx(float(vecs[i] @ q), abs=1e-5)
        assert h.score == h.dense_score
        assert np.allclose(h.vector, vecs[i], atol=1e-6)
        assert h.title.startswith("Title of docs/") and h.section == "Intro" and h.tags == ["tag-a"]
        assert h.pages == [i % 10 + 1]
    only = store.search(q, 50, where="source_path = 'docs/file2.md'")
    assert {h.source_path for h in only} == {"docs/file2.md"} and len(only) == 10
    assert store.count() == 40
    assert store.chunk_counts() == {f"docs/file{f}.md": 10 for f in range(4)}
    got = store.vectors([hits[0].chunk_id, hits[1].chunk_id])
    assert np.allclose(got[hits[1].chunk_id], vecs[expected[1]], atol=1e-6)


def test_one_table_per_embedder_identity(where: Where) -> None:
    a = _store(where, "clip-vit-b-32-openai")
    b = _store(where, "minilm-l6-v2", dim=16)
    assert a.name == "chunks__clip-vit-b-32-openai" and b.name == "chunks__minilm-l6-v2"
    assert table_name("chunks", "weird/name with spaces") == "chunks__weird_name_with_spaces"
    a.replace_files({"x.md": (_chunks("x.md", ["one"]), _unit(np.random.default_rng(1), 1))})
    assert a.count() == 1 and b.count() == 0
    # the other embedder's vectors are named (what the CLI and the status panel say), never mixed in
    assert b.other_indexes() == {"chunks__clip-vit-b-32-openai": 1}
    assert a.other_indexes() == {"chunks__minilm-l6-v2": 0}
    with pytest.raises(HarkError, match="dimensional"):
        ChunkStore(a._db, a.uri, "clip-vit-b-32-openai", 64, StoreSettings())


def test_fts_search_bm25_and_kept_up_to_date(where: Where) -> None:
    rng = np.random.default_rng(2)
    store = _store(where)
    texts = ["the notice period is three months", "bread needs flour water and salt", "tomatoes need sun"]
    store.replace_files({"a.md": (_chunks("a.md", texts), _unit(rng, 3))})
    store.update_indexes()
    assert store.has_fts_index()
    hits = store.fts_search("notice period", 5)
    assert hits[0].chunk_text == texts[0] and hits[0].bm25_score > 0 and hits[0].dense_score is None
    assert hits[0].vector is not None and len(hits[0].vector) == DIM
    assert store.fts_search('what\'s the "notice" (period)?', 5)[0].chunk_text == texts[0]
    # replaced text is found, removed text is gone, after the post-ingest index update
    store.replace_files({"a.md": (_chunks("a.md", ["cucumbers like water"], "v2"), _unit(rng, 1))})
    store.update_indexes()
    assert [h.chunk_text for h in store.fts_search("cucumbers", 5)] == ["cucumbers like water"]
    assert store.fts_search("notice period", 5) == []


def test_a_shortened_word_finds_its_full_form(tmp_path: Path) -> None:
    """"max number of students" finds "The maximum number of students per test is limited to 4,095"
    (knowledge/short_forms.py), above a text that only shares "number" and "students"."""
    store = _store(Where(str(tmp_path / "db"), {}))
    texts = ["The maximum number of students per test is limited to 4,095.",
             "Each student gets a number printed on the students' answer sheet, and the number is read back."]
    store.replace_files({"a.md": (_chunks("a.md", texts), _unit(np.random.default_rng(3), 2))})
    store.update_indexes()
    assert store.fts_search("whats the max number of students?", 5)[0].chunk_text == texts[0]


def test_changed_tokenizer_settings_rebuild_the_full_text_index(tmp_path: Path) -> None:
    from knowledge.settings import FtsSettings

    rng = np.random.default_rng(5)
    here = Where(str(tmp_path / "db"), {})
    store = _store(here)
    texts = ["the cats are sleeping on the sofa", "a dog barks at the postman"]
    store.replace_files({"a.md": (_chunks("a.md", texts), _unit(rng, 2))})
    store.update_indexes()
    assert [h.chunk_text for h in store.fts_search("cat", 5)] == [texts[0]]  # English stemming
    plain = _store(here, fts=FtsSettings(stem=False))
    assert not plain.has_fts_index()  # the index of other settings does not count
    plain.update_indexes()
    assert plain.fts_search("cat", 5) == [] and plain.fts_search("cats", 5)[0].chunk_text == texts[0]
    fts = [i for i in plain.table.list_indices() if i.index_type == "FTS"]
    assert len(fts) == 1  # the old index is dropped, so the search cannot pick it
    grams = _store(here, fts=FtsSettings(base_tokenizer="ngram", stem=False, remove_stop_words=False))
    grams.update_indexes()
    assert grams.fts_search("postmann barcks", 5)[0].chunk_text == texts[1]  # typos share most 3-grams


def test_replace_is_atomic_for_concurrent_readers(where: Where) -> None:
    rng = np.random.default_rng(3)
    store = _store(where)
    store.replace_files({"other.md": (_chunks("other.md", ["x"] * 3), _unit(rng, 3))})
    versions = {
        v: (_chunks("a.md", [f"{v} part {i}" for i in range(n)], v), _unit(rng, n))
        for v, n in (("v1", 4), ("v2", 7))
    }
    store.replace_files({"a.md": versions["v1"]})
    allowed = {frozenset(c.chunk_id for c in versions[v][0]) for v in versions}
    seen: list[frozenset[str]] = []
    stop = threading.Event()
    reader_store = _store(where)  # a second connection, like the app while the CLI ingests

    def reader() -> None:
        q = _unit(np.random.default_rng(4), 1)[0]
        while not stop.is_set():
            reader_store.table.checkout_latest()
            hits = reader_store.search(q, 50, where="source_path = 'a.md'")
            seen.append(frozenset(h.chunk_id for h in hits))

    t = threading.Thread(target=reader)
    t.start()
    try:
        for i in range(30):
            store.replace_files({"a.md": versions["v2" if i % 2 == 0 else "v1"]})
    finally:
        stop.set()
        t.join()
    assert len(seen) > 5
    assert set(seen) <= allowed, "a reader saw a half-written file or a gap"
    assert store.count() == 3 + 4


def test_delete_document_and_manifest(where: Where) -> None:
    store = _store(where)
    rng = np.random.default_rng(5)
    store.replace_files(
        {
            "a.md": (_chunks("a.md", ["one", "two"]), _unit(rng, 2)),
            "b.md": (_chunks("b.md", ["three"]), _unit(rng, 1)),
        }
    )
    store.record([DocumentInfo("a.md", title="A", chunks=2, file_hash="h"), DocumentInfo("b.md", chunks=1)])
    assert [d.source_path for d in store.documents()] == ["a.md", "b.md"]
    store.delete_document("a.md")
    assert store.count() == 1 and [d.source_path for d in store.documents()] == ["b.md"]
    assert set(store.text_hash_owners().values()) == {"b.md"}
    # a path with a quote is escaped, not injected
    store.replace_files({"it's.md": (_chunks("it's.md", ["q"]), _unit(rng, 1))})
    store.delete_document("it's.md")
    assert store.count() == 1


def test_approximate_index_above_threshold_keeps_recall(where: Where) -> None:
    rng = np.random.default_rng(6)
    centres = _unit(rng, 30, 64)
    n = 3000
    data = centres[rng.integers(0, 30, n)] + 0.06 * rng.normal(size=(n, 64)).astype(np.float32)  # cos ~0.9
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    store = _store(
        where, dim=64, ann_threshold=2000, ann_partitions=16, ann_nprobes=8, ann_refine_factor=4
    )
    chunks = [Chunk(f"c{i}", "big.md", f"text {i}", "Big", text_hash=f"h{i}") for i in range(n)]
    store.replace_files({"big.md": (chunks, data)})
    assert not store.has_vector_index()
    store.update_indexes()
    assert store.has_vector_index() and store.has_fts_index()
    recalls = []
    for q in data[rng.integers(0, n, 20)] + 0.02 * rng.normal(size=(20, 64)).astype(np.float32):
        exact = {h.chunk_id for h in store.search(q, 50, exact=True)}
        approx = {h.chunk_id for h in store.search(q, 50)}
        recalls.append(len(exact & approx) / 50)
    assert np.mean(recalls) >= 0.98
    truth = np.argsort(-(data @ (q / np.linalg.norm(q))))[:50]
    assert {h.chunk_id for h in store.search(q, 50, exact=True)} == {f"c{i}" for i in truth}


# ------------------------------------------------------------ write failures, on real file systems


@contextmanager
def _small_filesystem(path: Path, size: str) -> Iterator[bool]:
    """A real size-limited tmpfs at `path` when we may mount (root in a container with the right
    capability); yields False otherwise so the caller can use the unprivileged route."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = (
        os.geteuid() == 0
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
        ).returncode
        == 0
    )
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _make_read_only(path: Path, mounted: bool) -> None:
    if mounted:
        subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True)
    else:
        for p in [path, *path.rglob("*")]:
            p.chmod(0o555 if p.is_dir() else 0o444)


def test_read_only_data_dir_gives_a_clear_error_and_keeps_the_index(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    with _small_filesystem(tmp_path / "mnt", "8m") as mounted:
        if not mounted and os.geteuid() == 0:
            pytest.skip("root without mount capability: file modes do not stop root")  # honest limit
        store = ChunkStore.open(str(tmp_path / "mnt" / "db"), "e", DIM, StoreSettings())
        store.replace_files({"a.md": (_chunks("a.md", ["kept text"]), _unit(rng, 1))})
        store.update_indexes()
        _make_read_only(tmp_path / "mnt", mounted)
        with pytest.raises(StoreWriteError) as info:
            store.replace_files({"b.md": (_chunks("b.md", ["new"]), _unit(rng, 1))})
        assert "Read-only file system" in str(info.value) or "ermission denied" in str(info.value)
        assert "traceback" not in str(info.value).lower() and ".rs:" not in str(info.value)
        with pytest.raises(StoreWriteError):
            store.delete_document("a.md")
        with pytest.raises(StoreWriteError):
            ChunkStore.open(str(tmp_path / "mnt" / "db"), "another-embedder", DIM, StoreSettings())
        assert store.count() == 1
        assert store.search(_unit(rng, 1)[0], 5)[0].chunk_text == "kept text"
        assert store.fts_search("kept", 5)[0].chunk_text == "kept text"


def test_disk_full_gives_a_clear_error_and_keeps_the_index(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    with _small_filesystem(tmp_path / "mnt", "3m") as mounted:
        if not mounted:
            pytest.skip("needs a size-limited tmpfs (root with mount capability)")
        store = ChunkStore.open(str(tmp_path / "mnt" / "db"), "e", DIM, StoreSettings())
        store.replace_files({"a.md": (_chunks("a.md", ["kept text"]), _unit(rng, 1))})
        big = _chunks("big.md", [os.urandom(400).hex() for _ in range(6000)])  # incompressible, ~5 MB
        with pytest.raises(StoreWriteError, match="No space left on device"):
            store.replace_files({"big.md": (big, _unit(rng, len(big)))})
        assert store.count() == 1
        assert store.search(_unit(rng, 1)[0], 5)[0].chunk_text == "kept text"
