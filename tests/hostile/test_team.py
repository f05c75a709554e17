"""A library shared by a team on object storage (a real S3 server: moto over HTTP): the CLI ingests
into it, two real app processes (`launch.py` on two ports, each with its own data folder, as on two
machines) answer from it, a third process's ingest reaches both within `store.refresh_seconds`, and
ingests that meet are refused with a clear message without corrupting the table or the manifest."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from knowledge.ingest_lock import IngestLock
from knowledge.settings import StoreSettings
from knowledge.store import ChunkStore
from tests.hostile.injection import leaked_secrets
from tests.hostile.load_rig import CLIENT_TIMEOUT, PEOPLE, strip_html, write_library
from tests.hostile.team_rig import AppProcess, finish, ingest, start_app, write_config
from tests.s3_server import env
from tests.store_checks import consistent

pytestmark = pytest.mark.timeout(600)
REFRESH = 1.0  # store.refresh_seconds of every process here


def ask(url: str, question: str) -> str:
    """The sources panel of one turn (what the library gave the answer), as text."""
    from gradio_client import Client

    client = Client(url, verbose=False, httpx_kwargs={"timeout": CLIENT_TIMEOUT})
    _messages, _box, evidence, *_ = client.predict(question, api_name="/ask")
    return strip_html(evidence or "")


def memo_batch(folder: Path, k: int, pilot: str) -> Path:
    """Twelve memos and one note naming this batch's harbour pilot (found by no other batch)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(12):
        (folder / f"memo_{k}_{i:02d}.md").write_text(
            f"# Memo {k}-{i}\n\nMemo {k}-{i}: the shuttle leaves from gate {i} on day {k}.\n", encoding="utf-8")
    (folder / f"pilot_{k}.md").write_text(f"# Harbour pilot\n\nThe harbour pilot of batch {k} is {pilot}.\n",
                                          encoding="utf-8")
    return folder


PILOTS = ["Ottoline Vance", "Barnaby Quill"]


@pytest.fixture(scope="module")
def team(tmp_path_factory, s3, minilm):
    """While the test holds the library's ingest lease, the two apps start (on an empty library)
    and one CLI ingest is refused; then the ingest worker (a third process) fills the library."""
    base = tmp_path_factory.mktemp("team")
    uri = s3.new_uri()
    options = s3.storage_options()
    worker = write_config(base / "worker", uri, options, refresh=REFRESH)
    store = ChunkStore.open(uri, minilm.identity, minilm.dim, StoreSettings(storage_options=options))
    apps: list[AppProcess] = []
    try:
        with IngestLock(store._db, f"{store.name}__lock", 60):
            apps = [start_app(write_config(base / n, uri, options, refresh=REFRESH)) for n in ("node_a", "node_b")]
            refused = finish(ingest(worker, memo_batch(base / "refused", 9, "Nobody")))
        first = finish(ingest(worker, write_library(base / "docs")))
        for app in apps:
            app.wait_ready()
        yield {"base": base, "uri": uri, "options": options, "worker": worker, "apps": apps,
               "refused": refused, "first": first}
    finally:
        for app in apps:
            app.stop()


def _store(team: dict[str, Any], minilm) -> ChunkStore:
    settings = StoreSettings(storage_options=team["options"], refresh_seconds=0)
    return ChunkStore.open(team["uri"], minilm.identity, minilm.dim, settings)


def test_the_cli_ingests_into_object_storage(team, s3, minilm) -> None:
    rc, out, err = team["first"]
    assert rc == 0 and f"{len(PEOPLE) + 1} added" in out, err[-3000:]
    assert not leaked_secrets(out + err, env())
    store = _store(team, minilm)
    assert len(consistent(store)) == len(PEOPLE) + 1
    keys = s3.objects(team["uri"])
    assert any(f"/{store.name}__files.lance/" in k for k in keys)
    assert not list(team["base"].glob("**/*.lance"))  # nothing of the library on a local disk


def test_an_ingest_while_another_holds_the_library_is_refused(team, minilm) -> None:
    rc, out, err = team["refused"]
    assert rc == 2 and "another ingest is running on this library" in err, (rc, err[-2000:])
    assert "Traceback" not in err and not leaked_secrets(out + err, env())
    assert not any(p.startswith(("memo_9", "pilot_9")) for p in consistent(_store(team, minilm)))


def test_two_app_processes_answer_from_the_library_a_third_process_filled(team) -> None:
    a, b = team["apps"]  # both started before the ingest worker wrote anything
    for app, (name, city, _) in ((a, PEOPLE[0]), (b, PEOPLE[1]), (a, PEOPLE[2]), (b, PEOPLE[3])):
        assert city in ask(app.url, f"In which city is Project {name} based?"), (app.url, name)


def test_ingests_started_together_corrupt_nothing_and_reach_both_apps_in_refresh_seconds(team, minilm) -> None:
    store = _store(team, minilm)
    before = consistent(store)
    questions = [f"Who is the harbour pilot of batch {k}?" for k in range(2)]
    for app in team["apps"]:
        assert not any(p in ask(app.url, questions[0]) for p in PILOTS)
    runs = [ingest(team["worker"], memo_batch(team["base"] / f"batch_{k}", k, PILOTS[k])) for k in range(2)]
    results = [finish(p) for p in runs]
    done = [k for k, (rc, _out, _err) in enumerate(results) if rc == 0]
    assert done, results
    for rc, _out, err in results:  # each one either ran alone or was refused
        assert rc == 0 or (rc == 2 and "another ingest is running" in err and "Traceback" not in err), err[-2000:]
    time.sleep(REFRESH)
    for k in done:
        for app in team["apps"]:
            assert PILOTS[k] in ask(app.url, questions[k]), (app.url, k)
    after = consistent(store)
    assert set(before) <= set(after)
    for k in done:
        assert {f"memo_{k}_{i:02d}.md" for i in range(12)} | {f"pilot_{k}.md"} <= set(after)
