"""The library on object storage, against a real S3 server (moto over HTTP, tests/s3_server.py):
everything Hark keeps lives under the library's prefix; wrong credentials and a server that stops
mid-ingest give clear messages without a secret and leave the library as it was; one ingest at a
time, decided by the lease beside the chunks table (also on a folder)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from knowledge.ingest import Ingestor
from knowledge.ingest_lock import IngestBusy, IngestLock
from knowledge.ingest_progress import current_file
from knowledge.settings import IngestSettings, StoreSettings
from knowledge.store import ChunkStore, StoreWriteError
from models.runtime.errors import HarkError
from tests.conftest import ROOT
from tests.hostile.injection import leaked_secrets
from tests.s3_server import env
from tests.store_checks import consistent

pytestmark = pytest.mark.timeout(300)

SECRETS = env()  # the test credentials, scanned for in every message and log line


def hark_log(caplog) -> str:
    """Log lines of Hark and LanceDB (the S3 server and the client SDK the tests use are not Hark)."""
    return "\n".join(r.getMessage() for r in caplog.records
                     if not r.name.startswith(("moto", "botocore", "boto3", "werkzeug", "urllib3", "s3transfer")))


def _library(folder: Path, n: int, start: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(start, start + n):
        (folder / f"note_{i:02d}.md").write_text(
            f"# Note {i}\n\nThe courier for parcel number {i} is called Runner{i}. It leaves at {i} o'clock.\n",
            encoding="utf-8",
        )
    return folder


def _open(uri: str, minilm, s3, **kw: object) -> ChunkStore:
    settings = StoreSettings(storage_options=s3.storage_options(), refresh_seconds=0, **kw)
    return ChunkStore.open(uri, minilm.identity, minilm.dim, settings)


def test_everything_lives_under_the_prefix(tmp_path: Path, minilm, s3) -> None:
    uri = s3.new_uri()
    store = _open(uri, minilm, s3)
    report = Ingestor(store, minilm, IngestSettings()).ingest([_library(tmp_path / "docs", 3)])
    assert report.totals["added"] == 3
    tables = {key.split("/")[1] for key in s3.objects(uri)}
    assert {f"{store.name}.lance", f"{store.name}__files.lance", f"{store.name}__lock.lance"} <= tables
    assert not (tmp_path / "data").exists() and not list(tmp_path.glob("**/*.lance"))
    hit = store.search(minilm.embed_query("Who is the courier for parcel number 1?"), 1)[0]
    assert hit.source_path == "note_01.md"
    assert store.fts_search("Runner2", 1)[0].source_path == "note_02.md"


def test_wrong_credentials_give_a_clear_message_without_the_key(s3, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    uri = s3.new_uri()
    with s3.require_auth(), pytest.raises(StoreWriteError) as info:
        ChunkStore.open(uri, "e", 8, StoreSettings(storage_options=s3.storage_options()))
    text = str(info.value)
    assert "refused the credentials" in text and "InvalidAccessKeyId" in text, text
    assert "AWS_ACCESS_KEY_ID" in info.value.hint
    assert ".rs:" not in text and "Traceback" not in text and len(text) < 600
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert not leaked_secrets(text + info.value.hint + hark_log(caplog), SECRETS)


def test_credentials_in_the_config_are_refused_without_echoing_them(tmp_path: Path) -> None:
    from assistant.config import load_config

    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "store:\n  uri: s3://bucket/lib\n  storage_options:\n"
        f"    endpoint: http://127.0.0.1:9\n    aws_secret_access_key: {SECRETS['AWS_SECRET_ACCESS_KEY']}\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="must not hold credentials") as info:
        load_config(cfg)
    assert not leaked_secrets(str(info.value), SECRETS)
    assert StoreSettings(storage_options={"allow_http": True, "client_max_retries": 2}).storage_options == {
        "allow_http": "true", "client_max_retries": "2"}


def test_wrong_credentials_stop_the_app_at_start_up_with_a_message(tmp_path: Path, s3) -> None:
    cfg = tmp_path / "config.yaml"
    opts = "".join(f"    {k}: '{v}'\n" for k, v in s3.storage_options().items())
    cfg.write_text(f"embedder: {{backend: minilm}}\nstore:\n  uri: {s3.new_uri()}\n  storage_options:\n{opts}"
                   "speech: {warm_up: false}\ntts: {enabled: false}\n", encoding="utf-8")
    wrong = {**os.environ, "AWS_ACCESS_KEY_ID": "AKIAWRONGWRONG0000001", "HF_HUB_OFFLINE": "1"}
    with s3.require_auth():
        out = subprocess.run([sys.executable, str(ROOT / "launch.py"), "--config", str(cfg), "--port", "9"],
                             capture_output=True, text=True, timeout=240, env=wrong, cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-3000:]
    assert "hark: could not open the library" in out.stderr and "refused the credentials" in out.stderr
    assert "Traceback" not in out.stderr and "Hark is running" not in out.stdout
    secrets = {**SECRETS, "AWS_ACCESS_KEY_ID": "AKIAWRONGWRONG0000001"}
    assert not leaked_secrets(out.stdout + out.stderr, secrets), out.stderr[-2000:]


def test_server_stopped_mid_ingest_keeps_the_library_and_recovers(tmp_path: Path, minilm, s3, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    uri = s3.new_uri()
    store = _open(uri, minilm, s3, ingest_lock_seconds=3)
    settings = IngestSettings(write_batch_size=1)  # one commit per file
    docs = _library(tmp_path / "docs", 3)
    Ingestor(store, minilm, settings).ingest([docs])
    before = consistent(store)
    _library(docs, 5, start=3)

    stopped: list[bool] = []

    def stop_on_the_sixth(_fraction: float, message: str) -> None:
        if current_file(message) == "note_05.md" and not stopped:  # notes 3 and 4 are committed by now
            stopped.append(True)
            s3.stop()

    try:
        with pytest.raises(StoreWriteError) as info:
            Ingestor(store, minilm, settings).ingest([docs], progress=stop_on_the_sixth)
    finally:
        s3.start()  # the same port; the objects are kept
    text = str(info.value)
    assert "the object store did not answer" in text and s3.endpoint in text, text
    assert ".rs:" not in text and not leaked_secrets(text + hark_log(caplog), SECRETS)

    again = _open(uri, minilm, s3, ingest_lock_seconds=3)
    after = consistent(again)
    assert set(before) <= set(after) <= set(before) | {"note_03.md", "note_04.md"}
    assert again.search(minilm.embed_query("courier for parcel number 2"), 1)[0].source_path == "note_02.md"
    # the failed run could not release its lease: it expires (3 s here), then the next run finishes
    lease = IngestLock(again._db, f"{again.name}__lock", 3)
    deadline = time.monotonic() + 10
    while lease.holder() is not None and time.monotonic() < deadline:
        time.sleep(0.3)
    report = Ingestor(again, minilm, settings).ingest([docs])
    assert len(consistent(again)) == 8, report.files
    assert again.fts_search("Runner7", 1)[0].source_path == "note_07.md"


def test_a_second_free_row_taken_beside_a_held_lease_is_given_back(tmp_path: Path) -> None:
    """Two creators of the lock table at once can leave two free rows; an ingest that takes the
    second while another holds the first does not start, and frees the row it took (both had
    started in a fresh-clone CI run)."""
    import pyarrow as pa

    from knowledge.ingest_lock import _FREE, SCHEMA

    store = ChunkStore.open(str(tmp_path / "db"), "e", 8, StoreSettings())
    first = IngestLock(store._db, f"{store.name}__lock", 60)
    first.acquire()
    try:
        first._open().add(pa.Table.from_pylist([_FREE], SCHEMA))  # the late creator's free row
        second = IngestLock(store._db, f"{store.name}__lock", 60)
        with pytest.raises(IngestBusy, match="another ingest is running"):
            second.acquire()
        assert [row["owner"] for row in first._held()] == [first.owner]
    finally:
        first.release()


@pytest.mark.parametrize("place", ["folder", "s3"])
def test_one_lease_holder_among_racing_ingests(tmp_path: Path, place: str, request) -> None:
    if place == "s3":
        s3 = request.getfixturevalue("s3")
        uri, settings = s3.new_uri(), StoreSettings(storage_options=s3.storage_options())
    else:
        uri, settings = str(tmp_path / "db"), StoreSettings()
    stores = [ChunkStore.open(uri, "e", 8, settings) for _ in range(3)]  # one connection each
    go, won, busy = threading.Barrier(3), [], []
    tried = threading.Semaphore(0)  # one release per ingest turned away

    def take(store: ChunkStore) -> None:
        go.wait()
        try:
            with store.ingest_lock():
                won.append(store)
                for _ in range(2):  # held until both others have tried, however slow the machine
                    tried.acquire(timeout=60)
        except IngestBusy as exc:
            busy.append(str(exc))
            tried.release()

    threads = [threading.Thread(target=take, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(150)
    assert len(won) == 1 and len(busy) == 2, (won, busy)
    assert all("another ingest is running on this library (since" in b for b in busy)
    with stores[1].ingest_lock():  # released: the next one takes it
        assert IngestLock(stores[2]._db, f"{stores[2].name}__lock", 60).holder() is not None


def test_a_dead_holder_on_this_machine_frees_the_lease_at_once(tmp_path: Path) -> None:
    uri = str(tmp_path / "db")
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; sys.path.insert(0, sys.argv[2])\n"
         "from knowledge.settings import StoreSettings\nfrom knowledge.store import ChunkStore\n"
         "s = ChunkStore.open(sys.argv[1], 'e', 8, StoreSettings())\n"
         "with s.ingest_lock():\n    print('held', flush=True); time.sleep(120)",
         uri, str(ROOT)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        store = ChunkStore.open(uri, "e", 8, StoreSettings())
        with pytest.raises(HarkError, match=f"process {holder.pid}"):
            with store.ingest_lock():
                pass
    finally:
        holder.kill()
        holder.wait()
    with store.ingest_lock() as lock:  # killed: its lease is free at once, without waiting for expiry
        assert lock.holder()["owner"] == lock.owner
