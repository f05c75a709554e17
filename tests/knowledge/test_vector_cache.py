"""The in-memory exact search (knowledge/vector_cache.py) on a real LanceDB table: the same answer as
LanceDB's own exact search, never a stale or mixed version (writes in this process, writes by another
process, a writer racing the readers), and LanceDB's path where the cache does not apply."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from knowledge.settings import StoreSettings
from knowledge.store import ChunkStore
from knowledge.types import Chunk

DIM = 48
ROOT = Path(__file__).resolve().parents[2]


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.normal(size=(n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _chunks(sp: str, n: int, version: int) -> list[Chunk]:
    return [
        Chunk(
            f"{sp}#{i}",
            sp,
            f"{sp} version {version} part {i}",
            f"Title {sp}",
            "Sec",
            [i + 1],
            ["t"],
            f"h{version}",
            f"{sp}-{version}-{i}",
        )
        for i in range(n)
    ]


def _open(path: Path, **kw: object) -> ChunkStore:
    return ChunkStore.open(str(path), "cache-test", DIM, StoreSettings(**kw))


@pytest.fixture()
def filled(tmp_path: Path) -> tuple[Path, np.ndarray]:
    rng = np.random.default_rng(7)
    store = _open(tmp_path / "db")
    vecs = _unit(rng, 300)
    store.replace_files(
        {f"f{f}.txt": (_chunks(f"f{f}.txt", 10, 1), vecs[f * 10 : f * 10 + 10]) for f in range(30)}
    )
    return tmp_path / "db", _unit(rng, 20)


def test_memory_search_equals_lancedb_exact_search(filled) -> None:
    path, queries = filled
    fast = _open(path)
    slow = _open(path, memory_search=False)
    for q in queries:
        a, b = fast.search(q * 3.0, 25), slow.search(q, 25)  # an unnormalised query: cosine all the same
        assert [h.chunk_id for h in a] == [h.chunk_id for h in b]
        np.testing.assert_allclose([h.dense_score for h in a], [h.dense_score for h in b], atol=1e-5)
        for x, y in zip(a, b, strict=True):
            assert (x.chunk_text, x.title, x.section, x.pages, x.tags, x.source_path) == (
                y.chunk_text,
                y.title,
                y.section,
                y.pages,
                y.tags,
                y.source_path,
            )
            np.testing.assert_allclose(x.vector, y.vector, atol=1e-6)
    assert len(fast.search(queries[0], 1000)) == 300  # k above the table size: every row, once


def test_writes_in_this_process_are_seen_at_once(filled) -> None:
    path, queries = filled
    store = _open(path)
    target = store.search(queries[0], 1)[0]
    sp = target.source_path
    store.replace_files({sp: (_chunks(sp, 10, 2), np.tile(queries[0], (10, 1)))})
    top = store.search(queries[0], 10)
    assert {h.source_path for h in top} == {sp} and all("version 2" in h.chunk_text for h in top)
    store.delete_document(sp)
    assert all(h.source_path != sp for h in store.search(queries[0], 50))


def test_another_process_write_is_seen_after_refresh_and_within_refresh_seconds(filled) -> None:
    path, queries = filled
    prompt = _open(path, refresh_seconds=0.5)
    waiting = _open(path, refresh_seconds=3600)
    assert prompt.search(queries[1], 1)[0].source_path != "new.txt"
    assert waiting.search(queries[1], 1)[0].source_path != "new.txt"
    code = f"""
import sys, numpy as np
sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(ROOT / "tests" / "knowledge")!r})
from test_vector_cache import _open, _chunks
from pathlib import Path
q = np.array({queries[1].tolist()!r}, dtype=np.float32)
_open(Path({str(path)!r})).replace_files({{"new.txt": (_chunks("new.txt", 3, 1), np.tile(q, (3, 1)))}})
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert waiting.search(queries[1], 1)[0].source_path != "new.txt"  # its handle has not looked yet
    waiting.refresh()
    assert waiting.search(queries[1], 1)[0].source_path == "new.txt"
    time.sleep(0.6)
    assert prompt.search(queries[1], 1)[0].source_path == "new.txt"


def test_where_filter_uses_lancedb_and_respects_the_filter(filled) -> None:
    path, queries = filled
    store = _open(path)
    hits = store.search(queries[2], 5, where="source_path = 'f3.txt'")
    assert len(hits) == 5 and {h.source_path for h in hits} == {"f3.txt"}


def test_searches_racing_a_writer_never_mix_versions_of_a_file(filled) -> None:
    path, queries = filled
    store = _open(path)
    hot = queries[3]
    stop = threading.Event()
    versions: list[int] = []
    problems: list[str] = []

    def writer() -> None:
        v = 2
        while not stop.is_set() and v < 40:
            store.replace_files({"hot.txt": (_chunks("hot.txt", 8, v), np.tile(hot, (8, 1)))})
            v += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        deadline = time.monotonic() + 20
        while t.is_alive() and time.monotonic() < deadline:
            got = [h for h in store.search(hot, 20) if h.source_path == "hot.txt"]
            seen = {h.chunk_text.split(" version ")[1].split()[0] for h in got}
            if len(seen) > 1:
                problems.append(f"mixed versions {seen}")
            if got and len(got) != 8:
                problems.append(f"{len(got)} of 8 chunks of one version")
            versions += [int(s) for s in seen]
    finally:
        stop.set()
        t.join()
    assert not problems, problems[:5]
    assert len(set(versions)) >= 2, "the readers never saw the writer's progress"
    final = [h for h in store.search(hot, 20) if h.source_path == "hot.txt"]
    assert len(final) == 8 and all("version 39 " in h.chunk_text for h in final)


class _CountingTable:
    """The LanceDB table, counting every attribute read (each is a call into LanceDB)."""

    def __init__(self, table: object) -> None:
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "reads", [])

    def __getattr__(self, name: str) -> object:
        self.reads.append(name)
        return getattr(self._table, name)


def test_a_hybrid_search_makes_two_lancedb_calls_and_a_write_rebuilds(filled) -> None:
    """Each call into LanceDB crosses to its event-loop thread (milliseconds when that thread was
    idle), so a warm search reads only the version; the full-text scores add the query itself."""
    path, queries = filled
    store = _open(path)
    store.update_indexes()
    counting = _CountingTable(store._table)
    store._table = counting
    ids = [h.chunk_id for h in store.search(queries[4], 20)]  # first use: the pinned view, snapshot
    store.fts_scores("version part", ids)
    counting.reads.clear()
    view = store.view(text_search=True)  # one retrieval: the version, then everything on the view
    assert counting.reads == ["version"]
    pinned = _CountingTable(view.table)
    view.table = pinned
    hits = view.search(queries[4], 20)
    assert pinned.reads == []
    scores = view.fts_scores("version part", [h.chunk_id for h in hits])
    assert pinned.reads == ["search"] and counting.reads == ["version"]
    assert set(scores) == {h.chunk_id for h in hits} and all(s > 0 for s in scores.values())
    view.table = pinned._table
    # a write makes a new version: the next search reads the new rows, the count follows
    before = store.count()
    store.replace_files({"extra.txt": (_chunks("extra.txt", 4, 1), np.tile(queries[4], (4, 1)))})
    assert store.count() == before + 4
    assert {h.source_path for h in store.search(queries[4], 4)} == {"extra.txt"}


def test_warm_up_reads_the_snapshot_ahead_of_the_first_search(filled) -> None:
    path, queries = filled
    store = _open(path)
    store.warm_up()
    counting = _CountingTable(store._table)
    store._table = counting
    assert len(store.search(queries[5], 10)) == 10
    assert counting.reads == ["version"]
    big = _open(path, ann_threshold=256)  # 300 chunks ≥ the threshold: no snapshot, LanceDB's index path
    big.warm_up()
    assert big._vectors._snap is None


def test_after_clear_the_full_text_scores_read_the_new_table(filled) -> None:
    path, queries = filled
    store = _open(path)
    store.update_indexes()
    ids = [h.chunk_id for h in store.search(queries[6], 5)]
    assert store.fts_scores("version part", ids)
    store.clear()  # --rebuild: a new, empty table without indexes
    assert store.fts_scores("version part", ids) == {}
    assert store.search(queries[6], 5) == []


def test_a_rebuilt_table_reaching_the_old_version_number_is_read_afresh(tmp_path: Path) -> None:
    """clear() makes a new table whose versions count from 1 again: a snapshot of the old table
    must not be taken for the new one when the numbers meet."""
    rng = np.random.default_rng(3)
    store = _open(tmp_path / "db")
    q = _unit(rng, 1)[0]
    for f in range(3):
        store.replace_files({f"old{f}.txt": (_chunks(f"old{f}.txt", 2, 1), np.tile(q, (2, 1)))})
    old_version = int(store.table.version)
    assert {h.source_path for h in store.search(q, 6)} == {"old0.txt", "old1.txt", "old2.txt"}
    store.clear()
    f = 0
    while int(store.table.version) < old_version:
        store.replace_files({f"new{f}.txt": (_chunks(f"new{f}.txt", 2, 1), np.tile(q, (2, 1)))})
        f += 1
    assert int(store.table.version) == old_version
    assert all(h.source_path.startswith("new") for h in store.search(q, 6))


def _count_word_builds(monkeypatch: pytest.MonkeyPatch, hold: threading.Event | None = None) -> list[int]:
    """Every `library_words` build from now on, counted (and, with `hold`, held until it is set)."""
    import knowledge.vector_cache as vc

    real, builds = vc.library_words, []

    def counted(rows: Any) -> tuple[str, ...]:
        builds.append(rows.num_rows)
        if hold is not None:
            assert hold.wait(30)
        return real(rows)

    monkeypatch.setattr(vc, "library_words", counted)
    return builds


def test_warm_up_builds_the_word_list_before_the_first_question(filled, monkeypatch) -> None:
    """After a start (`warm_up`) and after a write (`replace_files` then `warm_up`, as
    `Assistant.library_changed` does), the first search and its word list build nothing; the list
    is the one a fresh build of the table gives."""
    from knowledge.vector_cache import _load, library_words

    path, queries = filled
    store = _open(path)
    builds = _count_word_builds(monkeypatch)
    store.warm_up()
    assert builds == [300]
    store.search(queries[0], 5)
    words = store.view().vocabulary()
    assert builds == [300]
    assert words == library_words(_load(store.table, ["title", "chunk_text"]).rows)
    assert {"title", "version", "part", "f29"} <= set(words) and "fresh" not in words
    # with how often each word occurs: "part" is in every chunk, "f29" in one file's
    assert words.total == 300 and words.chunks[words.index("part")] == 300
    same = str  # the words as they are (no stemming)
    assert words.idf("part", same) < words.idf("f29", same) < words.idf("never", same)

    extra = _chunks("fresh.txt", 4, 1)
    store.replace_files({"fresh.txt": (extra, queries[:4])})
    store.warm_up()
    assert builds == [300, 304]
    store.search(queries[1], 5)
    words = store.view().vocabulary()
    assert builds == [300, 304] and "fresh" in words
    assert words == library_words(_load(store.table, ["title", "chunk_text"]).rows)


def test_a_search_during_the_word_list_build_runs_and_its_list_waits_for_that_build(filled, monkeypatch) -> None:
    path, queries = filled
    store = _open(path)
    hold = threading.Event()
    builds = _count_word_builds(monkeypatch, hold)
    warming = threading.Thread(target=store.warm_up)
    warming.start()
    for _ in range(3000):
        if builds:
            break
        time.sleep(0.01)
    assert builds == [300]  # the build runs, held
    found: list = []
    searching = threading.Thread(target=lambda: found.append(store.search(queries[2], 3)))
    searching.start()
    searching.join(30)
    assert not searching.is_alive() and len(found[0]) == 3  # the search is not blocked by the build
    asked: list = []
    asking = threading.Thread(target=lambda: asked.append(store.view().vocabulary()))
    asking.start()
    hold.set()
    for t in (warming, asking):
        t.join(30)
        assert not t.is_alive()
    assert builds == [300]  # the second asker waited for the running build instead of starting one
    assert asked[0] == store.view().vocabulary() and "version" in asked[0]
