"""Web search against a loopback server speaking SerpAPI's JSON: results, no key, down, slow,
garbage, HTTP errors — and the key never shows up in notices or logs."""

from __future__ import annotations

import logging

import pytest

from assistant.config import WebSearchSettings
from assistant.websearch import WebSearch, parse_serpapi
from tests.serp_server import SerpServer, closed_port_url

KEY = "serp-SECRET-4242"


@pytest.fixture
def serp():
    with SerpServer() as s:
        yield s


def _client(url: str, key: str | None = KEY, **kw) -> WebSearch:
    return WebSearch(WebSearchSettings(base_url=url, **kw), key=lambda: key)


def test_answer_box_and_up_to_20_organic_results_become_numbered_hits(serp, caplog):
    caplog.set_level(logging.DEBUG)
    res = _client(serp.url).search("capital of France")
    assert res.ok and res.notices == []
    assert len(res.hits) == 21  # the answer box + 20 of the 25 organic results
    assert res.hits[0].chunk_text == "Paris is the capital of France."
    assert res.hits[0].source_path == "https://example.org/answer"
    assert [h.chunk_id for h in res.hits] == [f"web:{i}" for i in range(1, 22)]
    assert (
        res.hits[1].source_path == "https://example.org/1"
        and res.hits[-1].source_path == "https://example.org/20"
    )
    assert "capital of France" in res.hits[1].chunk_text
    scores = [h.score for h in res.hits]
    assert scores == sorted(scores, reverse=True)
    # the request is SerpAPI's: /search.json with engine, q and api_key
    assert serp.state.paths == ["/search.json"]
    params = serp.state.requests[0]
    assert (
        params["engine"] == ["google"] and params["q"] == ["capital of France"] and params["api_key"] == [KEY]
    )
    # httpx logs the request URL at INFO: the key is redacted there
    assert KEY not in caplog.text


def test_max_results_is_respected(serp):
    res = _client(serp.url, max_results=5).search("anything")
    assert len(res.hits) == 6  # answer box + 5


def test_no_key_means_no_request_and_a_notice(serp):
    res = _client(serp.url, key=None).search("capital of France")
    assert res.hits == [] and not res.ok
    assert "SERPAPI_API_KEY" in res.notices[0]
    assert serp.state.requests == []


def test_server_down(caplog):
    caplog.set_level(logging.DEBUG)
    res = _client(closed_port_url()).search("capital of France")
    assert res.hits == [] and "Web search failed" in res.notices[0]
    assert KEY not in caplog.text and KEY not in res.notices[0]


def test_slow_server_times_out_within_the_configured_timeout(serp):
    serp.state.mode, serp.state.delay = "slow", 3.0
    res = _client(serp.url, timeout=0.5).search("capital of France")
    assert res.hits == [] and "no reply within 0.5 s" in res.notices[0]
    assert res.ms < 2500


@pytest.mark.parametrize("mode", ["garbage", "layout"])
def test_garbage_json_gives_no_context_and_a_notice(serp, mode):
    serp.state.mode = mode
    res = _client(serp.url).search("capital of France")
    assert res.hits == [] and not res.ok
    assert "Web search failed" in res.notices[0]


def test_http_error_echoing_the_key_never_leaks_it(serp, caplog):
    caplog.set_level(logging.DEBUG)
    serp.state.mode = "http401"
    res = _client(serp.url).search("capital of France")
    assert res.hits == [] and "HTTP 401" in res.notices[0]
    assert KEY not in res.notices[0] and KEY not in caplog.text


def test_empty_results_say_so(serp):
    serp.state.mode = "empty"
    res = _client(serp.url).search("zxqv")
    assert res.ok and res.hits == [] and "found nothing" in res.notices[0]


def test_parse_rejects_what_is_not_serpapi_json():
    with pytest.raises(ValueError):
        parse_serpapi(["a", "list"], 20)
    with pytest.raises(ValueError):
        parse_serpapi({"error": "Invalid API key."}, 20)
    hits = parse_serpapi(
        {"organic_results": [{"title": "t"}, {"link": "https://x.org", "snippet": "s"}, 7]}, 20
    )
    assert [h.source_path for h in hits] == ["https://x.org"]
