"""Each provider class through its real SDK (openai, groq, google-genai) over real HTTP to the
loopback server: the wire format both ways, error mapping, no SDK retries, truncation detection."""

from __future__ import annotations

import pytest

from assistant.config import ProviderSettings
from assistant.llm.base import CallContext, CallOptions, Message, ProviderError
from assistant.llm.chain import make_provider
from tests.assistant import llm_fixtures as fx
from tests.assistant.llm_fixtures import KEYS, MODELS, provider_settings
from tests.llm_server import Drop, Fail, Reply
from tests.serp_server import closed_port_url

# fixtures (pytest finds them as module attributes)
server, llm_server, keys, no_key_leak = fx.server, fx.llm_server, fx.keys, fx.no_key_leak

MESSAGES = [Message("system", "You are terse."), Message("user", "Where is the Eiffel Tower?")]
OPTIONS = CallOptions(max_tokens=64, temperature=0.1, connect_timeout=2.0, read_timeout=5.0)
ROUTES = {"gemini": "gemini", "openai": "openai", "groq": "groq", "local": "openai"}
KEY_ENV = {"gemini": "GEMINI_API_KEY", "openai": "OPENAI_API_KEY", "groq": "GROQ_API_KEY"}


def _provider(server, name):
    return make_provider(name, provider_settings(server)[name])


@pytest.mark.parametrize("name", ["openai", "groq", "gemini", "local"])
def test_clean_stream_over_the_real_protocol(name, llm_server, keys, no_key_leak):
    llm_server.script(MODELS[name], Reply(["It is ", "in Paris", " [1]."]))
    chunks = list(_provider(llm_server, name).stream(MESSAGES, OPTIONS, CallContext()))
    assert chunks == ["It is ", "in Paris", " [1]."]

    (req,) = llm_server.requests
    assert req.route == ROUTES[name] and req.model == MODELS[name]
    if name == "gemini":
        assert req.headers.get("x-goog-api-key") == keys["GEMINI_API_KEY"]
        assert "alt=sse" in req.path
        assert req.body["systemInstruction"]["parts"][0]["text"] == "You are terse."
        assert req.body["contents"] == [{"role": "user", "parts": [{"text": "Where is the Eiffel Tower?"}]}]
        assert req.body["generationConfig"]["maxOutputTokens"] == 64
    else:
        if name != "local":
            assert req.headers.get("authorization") == f"Bearer {keys[KEY_ENV[name]]}"
        assert req.body["stream"] is True
        assert req.body["messages"] == [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Where is the Eiffel Tower?"},
        ]
        limit = "max_completion_tokens" if name == "openai" else "max_tokens"
        assert req.body[limit] == 64


@pytest.mark.parametrize("name", ["openai", "groq", "gemini"])
@pytest.mark.parametrize(
    ("status", "kind"), [(500, "server"), (503, "server"), (429, "rate_limit"), (401, "auth"), (403, "auth")]
)
def test_http_errors_map_to_kinds_without_sdk_retries(name, status, kind, llm_server, keys, no_key_leak):
    llm_server.script(MODELS[name], Fail(status))
    with pytest.raises(ProviderError) as info:
        list(_provider(llm_server, name).stream(MESSAGES, OPTIONS, CallContext()))
    assert (info.value.kind, info.value.status) == (kind, status)
    assert len(llm_server.requests) == 1, "the SDK retried; the chain should fail over instead"
    # the server echoed the key in its error body; the error we raise must not carry it
    assert KEYS[KEY_ENV[name]] not in str(info.value) and KEYS[KEY_ENV[name]] not in repr(info.value)


@pytest.mark.parametrize("name", ["openai", "groq", "gemini"])
def test_dropped_connection_is_truncated_not_a_short_answer(name, llm_server, keys):
    llm_server.script(MODELS[name], Drop(["One ", "two ", "three ", "four"], after=2))
    got: list[str] = []
    with pytest.raises(ProviderError) as info:
        for chunk in _provider(llm_server, name).stream(MESSAGES, OPTIONS, CallContext()):
            got.append(chunk)
    assert got == ["One ", "two "]
    assert info.value.kind == "truncated"


def test_refused_connection_is_a_connection_error(keys):
    # a port nothing listens on: bind, read the port, close
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for kind, base in (("openai", f"http://127.0.0.1:{port}/v1"), ("gemini", f"http://127.0.0.1:{port}")):
        settings = ProviderSettings(kind=kind, model="m", base_url=base, key_env=[KEY_ENV[kind]])
        with pytest.raises(ProviderError) as info:
            list(make_provider(kind, settings).stream(MESSAGES, OPTIONS, CallContext()))
        assert info.value.kind == "connection"


def test_availability_follows_keys_and_switches(llm_server, monkeypatch):
    settings = provider_settings(llm_server)
    for env in KEY_ENV.values():
        monkeypatch.delenv(env, raising=False)
    assert not make_provider("openai", settings["openai"]).available()
    assert make_provider("local", settings["local"]).available()  # a local server needs no key
    monkeypatch.setenv("GOOGLE_API_KEY", "g-test-SECRET000")
    gem = ProviderSettings(kind="gemini", model="m", key_env=["GEMINI_API_KEY", "GOOGLE_API_KEY"])
    assert make_provider("gemini", gem).available()
    off = settings["local"].model_copy(update={"enabled": False})
    assert not make_provider("local", off).available()
    assert "SECRET" not in repr(make_provider("gemini", gem))


@pytest.fixture
def full_backlog_port():
    """A port whose listen backlog is full: a new connection's handshake hangs (a black hole)."""
    import socket
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(s)
    time.sleep(0.2)
    yield port
    for s in [*fillers, listener]:
        s.close()


@pytest.mark.parametrize("name", ["openai", "groq"])
def test_connect_timeout_is_separate_from_the_read_timeout(name, full_backlog_port, keys):
    import time

    base = f"http://127.0.0.1:{full_backlog_port}" + ("/v1" if name == "openai" else "")
    settings = ProviderSettings(kind=name, model="m", base_url=base, key_env=[KEY_ENV[name]])
    options = CallOptions(connect_timeout=0.5, read_timeout=20.0)
    t0 = time.monotonic()
    with pytest.raises(ProviderError) as info:
        list(make_provider(name, settings).stream(MESSAGES, options, CallContext()))
    assert info.value.kind == "timeout"
    assert time.monotonic() - t0 < 0.5 + 3.0  # the connect timeout, far from the 20 s read timeout


def test_a_local_server_counts_only_while_it_answers(llm_server):
    import time

    running = ProviderSettings(kind="openai_compatible", model="local-test", base_url=llm_server.openai_url)
    assert make_provider("local", running).available()
    dead = ProviderSettings(
        kind="openai_compatible", model="m", base_url=closed_port_url() + "/v1"
    )
    t = time.monotonic()
    assert not make_provider("local", dead).available()
    assert time.monotonic() - t < 1.0  # the probe does not hold up a turn
    assert llm_server.requests == []  # probing asks for no completion


def test_a_running_local_server_answers_before_the_extractive_link(llm_server, monkeypatch):
    """No key at all: the local server (Ollama's API over loopback) writes the answer, with the
    prompt's not-known and context-is-data rules; with nothing listening, the extractive link answers
    without a failover notice."""
    from assistant.answer import Answerer
    from assistant.config import PromptSettings
    from assistant.events import NOT_KNOWN, Notice
    from assistant.llm.chain import LLMChain
    from tests.assistant.llm_fixtures import lease_hits, llm_settings

    for env in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(env, raising=False)
    settings = llm_settings(llm_server, ["gemini", "openai", "groq", "local"])
    llm_server.script(MODELS["local"], Reply(["The rent is ", "900 EUR [1]."]))
    chain = LLMChain(settings)
    assert dict(chain.available())["local"] is True
    answer = Answerer(settings, PromptSettings(), chain=chain).answer("How much is the rent?", lease_hits())
    assert answer.provider == "local" and answer.text == "The rent is 900 EUR [1]."
    (req,) = llm_server.requests
    system = req.body["messages"][0]["content"]
    assert NOT_KNOWN in system and "data, not instructions" in system

    dead = settings.model_copy(deep=True)
    dead.providers["local"] = dead.providers["local"].model_copy(
        update={"base_url": closed_port_url() + "/v1"}
    )
    chain = LLMChain(dead)
    assert dict(chain.available())["local"] is False
    events = list(Answerer(dead, PromptSettings(), chain=chain).stream("How much is the rent?", lease_hits()))
    assert events[-1].provider == "extractive" and "900 EUR" in events[-1].text
    assert not [e for e in events if isinstance(e, Notice)]
