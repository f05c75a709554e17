"""Shared set-up for the answer tests: the loopback server, provider settings pointing at it,
fake keys, and a check that no key ever reaches the logs."""

from __future__ import annotations

import logging

import pytest

from assistant.config import LLMSettings, ProviderSettings
from knowledge.types import Hit
from tests.llm_server import LLMServer

KEYS = {
    "OPENAI_API_KEY": "sk-test-SECRET123",
    "GROQ_API_KEY": "gsk-test-SECRET456",
    "GEMINI_API_KEY": "gm-test-SECRET789",
}
MODELS = {"gemini": "gemini-test", "openai": "gpt-test", "groq": "groq-test", "local": "local-test"}


def provider_settings(server: LLMServer) -> dict[str, ProviderSettings]:
    return {
        "gemini": ProviderSettings(
            kind="gemini", model=MODELS["gemini"], base_url=server.url, key_env=["GEMINI_API_KEY"]
        ),
        "openai": ProviderSettings(
            kind="openai", model=MODELS["openai"], base_url=server.openai_url, key_env=["OPENAI_API_KEY"]
        ),
        "groq": ProviderSettings(
            kind="groq", model=MODELS["groq"], base_url=server.url, key_env=["GROQ_API_KEY"]
        ),
        "local": ProviderSettings(
            kind="openai_compatible", model=MODELS["local"], base_url=server.openai_url
        ),
    }


def llm_settings(server: LLMServer, order: list[str], **overrides: object) -> LLMSettings:
    values: dict = {
        "order": order,
        "providers": provider_settings(server),
        "connect_timeout": 2.0,
        "first_token_timeout": 3.0,
        "total_timeout": 10.0,
        "cooldown_seconds": 60.0,
        "failures_before_cooldown": 2,
    }
    values.update(overrides)
    return LLMSettings(**values)


@pytest.fixture(scope="module")
def server():
    with LLMServer(max_lifetime=600) as s:
        yield s


@pytest.fixture
def llm_server(server):
    server.clear()
    yield server
    server.clear()


@pytest.fixture
def keys(monkeypatch):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    return KEYS


@pytest.fixture
def no_key_leak(caplog):
    """Capture every log record at DEBUG; after the test, assert no key appears in any of them."""
    caplog.set_level(logging.DEBUG)
    yield caplog
    text = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    for value in KEYS.values():
        assert value not in text, "an API key reached the logs"


def lease_hits() -> list[Hit]:
    return [
        Hit(
            "lease-1",
            "docs/lease.pdf",
            "Lease agreement",
            "The tenancy runs from 1 March 2024 to 28 February 2025. The monthly rent is 900 EUR, due on the first day.",
            0.82,
            dense_score=0.71,
            pages=[1],
        ),
        Hit(
            "lease-3",
            "docs/lease.pdf",
            "Lease agreement",
            "Either party may end the tenancy with three months' notice. Notices must be given in writing.",
            0.77,
            dense_score=0.64,
            pages=[3],
        ),
        Hit(
            "garden",
            "notes/garden.md",
            "Garden notes",
            "Tomatoes need six hours of sun. Water them in the morning.",
            0.41,
            dense_score=0.33,
        ),
    ]
