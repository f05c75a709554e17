"""Load through the running app (gradio_client): 20 concurrent sessions stay separate, and searches
keep answering — from the old or the new version of a file, never a mix — while a file is re-ingested.
Also the bad-file corpus and hostile multipart names uploaded through the app.

Switches (web search, memory strategy…) are browser-only controls (no API endpoint): crossed
switches are checked in six concurrent browser contexts by tests/ui/test_app_switches.py; here memory
and sources are checked.
"""

from __future__ import annotations

import html
import re
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.hostile.corpus import UPLOAD_NAMES, build_bad_corpus, tree_listing
from tests.hostile.load_rig import CLIENT_TIMEOUT, PEOPLE, POLICY_V2, run_session, run_sessions, start_app
from tests.llm_server import Drop, Fail, LLMServer, Reply, Stall

pytestmark = [pytest.mark.timeout(420), pytest.mark.slow]

@pytest.fixture(scope="module")
def llm():
    """Two loopback providers that fail (HTTP 500) unless a test scripts them: every turn of the load
    tests meets failing providers and must still answer (extractively, with a notice)."""
    with LLMServer(default=Fail(500), max_lifetime=900) as server:
        yield server


@pytest.fixture(scope="module")
def app(tmp_path_factory, minilm, llm):
    providers = {
        "primary": {"kind": "openai_compatible", "model": "p1", "base_url": llm.openai_url, "key_env": []},
        "secondary": {"kind": "openai_compatible", "model": "p2", "base_url": llm.openai_url, "key_env": []},
    }
    a = start_app(tmp_path_factory.mktemp("load_app"), minilm, concurrency=4, providers=providers)
    yield a
    a.close()


def _names_in(text: str) -> list[str]:
    return [n for n, _, _ in PEOPLE if re.search(rf"\bProject {n}\b", text)]


def test_twenty_concurrent_sessions_stay_separate(app):
    logs = run_sessions(app.url, 20, follow_up=True)
    errors = [f"session {i}: {lg.error}" for i, lg in enumerate(logs) if lg.error]
    assert not errors, errors
    problems, follow_ok = [], 0
    for lg in logs:
        name, city, mascot = PEOPLE[lg.person]
        first, second = lg.turns
        # memory: each session sees exactly its own questions
        if first["users"] != [first["q"]] or second["users"] != [first["q"], second["q"]]:
            problems.append(f"{name}: crossed memory {second['users']}")
        # sources: the session's own document answers its own question
        if city.lower() not in first["answer"].lower():
            problems.append(f"{name}: first answer lacks {city}: {first['answer'][:200]!r}")
        if f"project_{name.lower()}.md" not in first["evidence"]:
            problems.append(f"{name}: own source missing from the evidence panel")
        # the follow-up can only name a project through this session's memory
        foreign = [n for n in _names_in(second["meta"]) if n != name]
        if foreign:
            problems.append(f"{name}: follow-up rewritten with another session's project {foreign}: {second['meta'][:200]!r}")
        follow_ok += mascot.lower() in second["answer"].lower()
    assert not problems, "\n".join(problems)
    assert follow_ok >= 16, f"only {follow_ok}/20 follow-ups answered with the session's own project"


def test_searches_keep_answering_during_an_ingest(app, tmp_path):
    """Eight sessions ask for the policy codeword while the file is replaced through an upload."""
    from gradio_client import Client, handle_file

    new = tmp_path / "policy.txt"
    new.write_text(POLICY_V2)
    results: list = []
    done = threading.Event()

    def asker(i: int) -> None:
        while not done.is_set():
            results.append(run_session(app.url, i, follow_up=False, policy_asks=1))

    threads = [threading.Thread(target=asker, args=(i,), daemon=True) for i in range(6)]
    for t in threads:
        t.start()
    time.sleep(3)
    t0 = time.perf_counter()
    report, *_ = Client(app.url, verbose=False, httpx_kwargs={"timeout": CLIENT_TIMEOUT}).predict([handle_file(str(new))], api_name="/upload")
    ingest_s = time.perf_counter() - t0
    time.sleep(2)
    done.set()
    for t in threads:
        t.join(timeout=120)
    assert "policy.txt" in report and "failed" not in report.lower(), report
    answers = [turn["answer"] for lg in results for turn in lg.turns if "vault" in turn["q"]]
    errors = [lg.error for lg in results if lg.error]
    assert not errors, errors[:3]
    assert len(answers) >= 6, f"only {len(answers)} answers during a {ingest_s:.1f} s ingest"
    for a in answers:
        has_old, has_new = "ALPHAQUARTZ" in a, "BETAGARNET" in a
        assert has_old != has_new, f"neither or both versions: {a!r}"
    final = run_session(app.url, 0, follow_up=False, policy_asks=1)
    assert "BETAGARNET" in final.turns[-1]["answer"], final


def test_bad_corpus_and_hostile_names_uploaded_through_the_app(app, tmp_path):
    """Every bad file gets a line in the upload report; nothing lands outside the library folder."""
    from gradio_client import Client, handle_file

    corpus = build_bad_corpus(tmp_path / "bad", max_file_mb=1.0, long_line_mb=0.05, bomb_bytes=1 << 20, names=False)
    # the real bomb and the multi-megabyte line have their own tests (test_bad_files)
    files = [f for f in corpus if f.kind not in ("zip_bomb_docx", "giant_line")]
    before = tree_listing(app.base, exclude=(app.base / "data",))
    client = Client(app.url, verbose=False, httpx_kwargs={"timeout": CLIENT_TIMEOUT})
    # one upload (one ingest) for the whole corpus: each file still gets its own line
    report, *_ = client.predict([handle_file(str(f.path)) for f in files], api_name="/upload")
    text = html.unescape(report)
    assert "Traceback" not in text
    for f in files:
        if f.path.stat().st_size > 5 * 1024 * 1024:
            continue
        assert f.path.name in text or f.path.stem in text, f"{f.path.name} missing from the report:\n{text}"
    # raw multipart uploads with path-traversal names, then handed to the upload endpoint
    server_paths = []
    with httpx.Client(timeout=30) as http:
        for name in UPLOAD_NAMES:
            r = http.post(f"{app.url}gradio_api/upload",
                          files={"files": (name, b"An uploaded note about the escaped file test.\n")})
            if r.status_code == 200:  # else refused by the server: fine
                server_paths.append(r.json()[0])
    if server_paths:
        client.predict([handle_file(p) for p in server_paths], api_name="/upload")
    after = tree_listing(app.base, exclude=(app.base / "data",))
    assert after == before, after ^ before
    for name in UPLOAD_NAMES:
        leaf = re.split(r"[\\/]", name)[-1]
        for parent in (app.base, app.base.parent, Path("/tmp"), app.library_dir.parent):
            assert not (parent / leaf).exists(), f"{parent / leaf} written outside the library"


@pytest.mark.parametrize("failure", [Fail(401), Fail(429), Fail(503), Stall(5), Drop(after=2)],
                         ids=["401", "429", "503", "stall", "drop"])
def test_provider_failures_through_the_app(app, llm, failure):
    """Each failure mode of the first provider → the second provider's answer, through /ask."""
    from gradio_client import Client

    llm.clear()
    llm.script("p1", failure)
    llm.script("p2", Reply("The mascot of Project Aurelia is a bassoon [1]."))
    client = Client(app.url, verbose=False, httpx_kwargs={"timeout": CLIENT_TIMEOUT})
    t0 = time.perf_counter()
    messages, _box, _evidence, meta, *_ = client.predict("What is the mascot of Project Aurelia?", api_name="/ask")
    answer = next(m for m in reversed(messages) if m["role"] == "assistant")["content"]
    answer = answer if isinstance(answer, str) else str(answer)
    assert "bassoon" in answer, (answer, meta)
    assert [r.model for r in llm.requests][:2] == ["p1", "p2"], [r.model for r in llm.requests]
    assert time.perf_counter() - t0 < 30
    if isinstance(failure, Drop):  # the half answer is replaced, not left in front of the new one
        assert "This answer will" not in answer, answer


def test_all_providers_down_through_the_app_gives_the_extractive_answer_with_a_notice(app, llm):
    from gradio_client import Client

    llm.clear()  # both providers fall back to the default: HTTP 500
    client = Client(app.url, verbose=False, httpx_kwargs={"timeout": CLIENT_TIMEOUT})
    messages, _box, _evidence, meta, *_ = client.predict("In which city is Project Greta based?", api_name="/ask")
    answer = str(next(m for m in reversed(messages) if m["role"] == "assistant")["content"])
    assert "Hobart" in answer, answer
    assert {r.model for r in llm.requests} == {"p1", "p2"}
    assert meta.strip() and "Traceback" not in meta, meta


def test_the_app_serves_no_file_outside_its_upload_cache(app):
    """The file routes must not hand out /etc/passwd, the config, the traces or the library."""
    from tests.conftest import ROOT

    (app.library_dir / "private_note.txt").write_text("private library note: heliotrope-99\n")
    targets = {
        "/etc/passwd": "root:",
        str(ROOT / "config.yaml"): "embedder:",
        str(app.library_dir / "private_note.txt"): "heliotrope-99",
        str(app.base / "docs" / "policy.txt"): "codeword",
    }
    with httpx.Client(timeout=30) as http:
        for target, secret_text in targets.items():
            for route in ("gradio_api/file=", "file=", "gradio_api/file/"):
                r = http.get(f"{app.url}{route}{target}")
                assert not (r.status_code == 200 and secret_text in r.text), f"{route}{target} was served"
