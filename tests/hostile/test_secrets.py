"""Secrets: with fake keys in the environment, no key appears in any answer, notice, trace, log line,
status panel or error — also when every provider fails in a different way and their error bodies
echo the key back (as real providers partly do). Each key travels only to its own provider. The
object-storage credentials likewise, on a library in a real S3 server (moto): answering, the server
stopping mid-conversation and mid-ingest, and refused credentials at start-up.
"""

from __future__ import annotations

import json
import logging

import pytest

from models.runtime.errors import HarkError
from tests.hostile.harness import all_log_text, make_assistant, provider_block
from tests.hostile.injection import FAKE_KEYS, leaked_secrets
from tests.llm_server import Drop, Fail, LLMServer, Reply, Stall
from tests.s3_server import env as s3_credentials
from tests.serp_server import SerpServer

pytestmark = pytest.mark.timeout(180)

DOC = "The boiler service is booked for the fourth of May. The plumber's name is Ada Lindqvist.\n"


@pytest.fixture(scope="module")
def server():
    with LLMServer(max_lifetime=600) as s:
        yield s


@pytest.fixture(scope="module")
def rig(tmp_path_factory, minilm, keys, server):
    root = tmp_path_factory.mktemp("secrets")
    lib = root / "library"
    lib.mkdir()
    (lib / "house.txt").write_text(DOC)
    providers = {
        "gemini": provider_block("gemini", "gem-model", server.url, ["GEMINI_API_KEY", "GOOGLE_API_KEY"]),
        "groq": provider_block("groq", "groq-model", server.url, ["GROQ_API_KEY"]),
        "openai": provider_block("openai", "oa-model", server.openai_url, ["OPENAI_API_KEY"]),
        "local": provider_block("openai_compatible", "local-model", server.openai_url, []),
    }
    with SerpServer("http401") as web:
        yield make_assistant(root, minilm, library=lib, providers=providers, web_url=web.url,
                             llm_timeouts=(2.0, 2.0, 10.0)), web


def _headers(req) -> dict[str, str]:
    return {k.lower(): v for k, v in req.headers.items()}


def _scan_all(rig, r, caplog) -> list[str]:
    blobs = [r.everything, all_log_text(caplog), json.dumps(rig.assistant.status(), default=str)]
    if rig.trace_path.exists():
        blobs.append(rig.trace_path.read_text())
    return leaked_secrets("\n".join(blobs))


def test_every_provider_failing_differently_leaks_no_key(rig, server, caplog):
    rig, _web = rig
    caplog.set_level(logging.DEBUG)
    server.clear()
    server.script("gem-model", Fail(401))  # error body echoes the key
    server.script("groq-model", Fail(500))
    server.script("oa-model", Drop("The boiler service is booked for", after=2))
    server.script("local-model", Reply("The boiler service is booked for the fourth of May [1]."))
    r = rig.turn(rig.assistant.new_session(), "When is the boiler service booked?")
    assert r.provider == "local", (r.provider, r.notices, r.answer)
    assert "fourth of May" in r.answer
    assert not _scan_all(rig, r, caplog), "a key leaked"


def test_each_key_goes_only_to_its_own_provider(rig, server):
    rig, _web = rig
    server.clear()
    for model in ("gem-model", "groq-model", "oa-model"):
        server.script(model, Fail(503))
    server.script("local-model", Reply("The plumber is Ada Lindqvist [1]."))
    rig.turn(rig.assistant.new_session(), "What is the plumber's name?")
    seen = {q.route + ":" + q.model: _headers(q) for q in server.requests}
    assert set(seen) >= {"gemini:gem-model", "groq:groq-model", "openai:oa-model", "openai:local-model"}, seen
    assert seen["gemini:gem-model"].get("x-goog-api-key") == FAKE_KEYS["GEMINI_API_KEY"]
    assert seen["groq:groq-model"].get("authorization") == f"Bearer {FAKE_KEYS['GROQ_API_KEY']}"
    assert seen["openai:oa-model"].get("authorization") == f"Bearer {FAKE_KEYS['OPENAI_API_KEY']}"
    for name, headers in seen.items():
        own = {"gemini:gem-model": "GEMINI_API_KEY", "groq:groq-model": "GROQ_API_KEY",
               "openai:oa-model": "OPENAI_API_KEY"}.get(name)
        others = {k: v for k, v in FAKE_KEYS.items() if k != own}
        assert not leaked_secrets(json.dumps(headers), others), f"{name} received another provider's key"


def test_a_stalled_provider_and_failing_web_search_leak_no_key(rig, server, caplog):
    rig, web = rig
    caplog.set_level(logging.DEBUG)
    server.clear()
    server.script("gem-model", Stall(5))
    server.script("groq-model", Fail(429))
    server.script("oa-model", Fail(403))
    server.script("local-model", Reply("Canberra is the capital [1]."))
    s = rig.assistant.new_session()
    s.always_web_search = True
    r = rig.turn(s, "What is the capital of Australia?")
    assert web.state.requests, "web search was not called"
    assert web.state.requests[-1].get("api_key") == [FAKE_KEYS["SERPAPI_API_KEY"]]
    assert any("web" in n.lower() for n in r.notices), r.notices
    assert not _scan_all(rig, r, caplog), "a key leaked"


def test_provider_and_status_reprs_hold_no_key(rig):
    rig, _web = rig
    chain = rig.assistant.parts.chain.get()
    text = repr(chain) + repr(getattr(chain, "providers", "")) + repr(rig.assistant.status()) + repr(rig.cfg)
    assert not leaked_secrets(text)


def test_the_leak_detector_sees_whole_and_partial_keys():
    key = FAKE_KEYS["OPENAI_API_KEY"]
    assert leaked_secrets(f"error: {key}") == ["OPENAI_API_KEY"]
    assert leaked_secrets(f"...{key[5:25]}...") == ["OPENAI_API_KEY"]
    assert leaked_secrets("sk-hark-***") == []


def _hark_log_text(caplog) -> str:
    """All log records but those of the S3 server and SDK the test runs (they are not Hark)."""
    fmt = logging.Formatter("%(levelname)s %(name)s %(message)s")
    return "\n".join(fmt.format(r) for r in caplog.records
                     if not r.name.startswith(("moto", "botocore", "boto3", "werkzeug", "urllib3", "s3transfer")))


def test_the_object_storage_paths_leak_no_credential(tmp_path, minilm, s3, caplog):
    caplog.set_level(logging.DEBUG)
    lib = tmp_path / "library"
    lib.mkdir()
    (lib / "house.txt").write_text(DOC)
    store = {"uri": s3.new_uri(), "storage_options": s3.storage_options(), "refresh_seconds": 0}
    extra = {"store": store, "ingest": {"isolation": "inline"}}
    rig = make_assistant(tmp_path / "a", minilm, library=lib, extra=extra)
    ok = rig.turn(rig.assistant.new_session(), "When is the boiler service booked?")
    assert "fourth of May" in ok.answer, ok.answer
    (lib / "house.txt").write_text(DOC + "The chimney sweep comes in June.\n")
    s3.stop()
    try:
        down = rig.turn(rig.assistant.new_session(), "What is the plumber's name?")
        with pytest.raises(HarkError) as ingest_down:
            rig.assistant.ingest([lib])
    finally:
        s3.start()
    with s3.require_auth(), pytest.raises(HarkError) as refused:
        make_assistant(tmp_path / "b", minilm, extra=extra).assistant.warm_up()
    assert "refused the credentials" in str(refused.value)
    blobs = [ok.everything, down.everything, str(ingest_down.value), str(refused.value), _hark_log_text(caplog),
             json.dumps(rig.assistant.status(), default=str), repr(rig.cfg)]
    if rig.trace_path.exists():
        blobs.append(rig.trace_path.read_text())
    assert not leaked_secrets("\n".join(blobs), s3_credentials()), "an object-storage credential leaked"
