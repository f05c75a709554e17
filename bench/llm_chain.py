"""Time Hark adds between a provider's first token and the caller's first token.

Against the loopback server (tests/llm_server.py), for each provider SDK, interleaved runs of:
- raw SDK:   the SDK's own stream, first text chunk in the caller's hand;
- chain:     `LLMChain.stream` (worker thread + queue + deadlines), first text chunk;
- answerer:  `Answerer.stream` (prompt building, chain, streaming citation rewrite), first `Token`.
Each time is measured from the moment the server wrote the first text chunk (same process, same
`time.perf_counter` clock). "Hark adds" = answerer p50 − raw SDK p50 (target: ≤ 5 ms). Prompt
building happens before the request, so it is not in this number; it is timed separately.

    python -m bench.llm_chain [--runs 60]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import time

import httpx  # noqa: F401 - imported up front: openai's stream clean-up looks it up while gemini imports it

from assistant.answer import Answerer
from assistant.config import LLMSettings, PromptSettings, ProviderSettings
from assistant.events import Restart, Token
from assistant.llm.base import CallContext, CallOptions
from assistant.llm.chain import LLMChain, make_provider
from bench.common import pct
from knowledge.types import Hit
from tests.llm_server import Drop, Fail, LLMServer, Reply

KEYS = {"OPENAI_API_KEY": "sk-bench", "GROQ_API_KEY": "gsk-bench", "GEMINI_API_KEY": "gm-bench"}
EVIDENCE = [
    Hit(
        "a",
        "docs/lease.pdf",
        "Lease",
        "Either party may end the tenancy with three months' notice.",
        0.8,
        pages=[3],
    ),
    Hit("b", "docs/lease.pdf", "Lease", "The monthly rent is 900 EUR.", 0.7, pages=[1]),
]
REPLY = ["The ", "notice ", "period ", "is ", "three ", "months ", "[1]."]


def _settings(server: LLMServer, name: str) -> LLMSettings:
    providers = {
        "openai": ProviderSettings(
            kind="openai", model="m-openai", base_url=server.openai_url, key_env=["OPENAI_API_KEY"]
        ),
        "groq": ProviderSettings(kind="groq", model="m-groq", base_url=server.url, key_env=["GROQ_API_KEY"]),
        "gemini": ProviderSettings(
            kind="gemini", model="m-gemini", base_url=server.url, key_env=["GEMINI_API_KEY"]
        ),
    }
    return LLMSettings(
        order=[name], providers={name: providers[name]}, first_token_timeout=10, total_timeout=30
    )


def _since_first_write(server: LLMServer, t_caller: float) -> float:
    rec = server.requests[-1]
    assert rec.first_token_at is not None
    return (t_caller - rec.first_token_at) * 1000.0


def run(runs: int) -> list[tuple[str, str, list[float]]]:
    os.environ.update(KEYS)
    rows: list[tuple[str, str, list[float]]] = []
    with LLMServer(default=Reply(REPLY, ttft=0.02)) as server:
        for name in ("openai", "groq", "gemini"):
            settings = _settings(server, name)
            provider = make_provider(name, settings.providers[name])
            provider.prepare()
            chain = LLMChain(settings)
            chain.warm_up()
            answerer = Answerer(settings, PromptSettings(), chain=chain)
            msgs = answerer.builder.build("What is the notice period?", EVIDENCE)
            options = CallOptions(max_tokens=64, read_timeout=10)
            samples: dict[str, list[float]] = {"raw SDK": [], "chain": [], "answerer": []}
            for i in range(runs + 3):  # the first 3 rounds warm connections and caches
                got: dict[str, float] = {}
                for _chunk in provider.stream(msgs, options, CallContext()):
                    got["raw SDK"] = _since_first_write(server, time.perf_counter())
                    break
                for item in chain.stream(msgs):
                    if isinstance(item, str):
                        got["chain"] = _since_first_write(server, time.perf_counter())
                        break
                for event in answerer.stream("What is the notice period?", EVIDENCE):
                    if isinstance(event, Token):
                        got["answerer"] = _since_first_write(server, time.perf_counter())
                        break
                if i >= 3:
                    for k, v in got.items():
                        samples[k].append(v)
            rows += [(name, k, v) for k, v in samples.items()]
    return rows


def failover(runs: int) -> list[tuple[str, float]]:
    """Caller's first token of the answer that counts, gemini scripted to fail, openai answering."""
    os.environ.update(KEYS)
    rows: list[tuple[str, float]] = []
    with LLMServer(default=Reply(REPLY, ttft=0.02)) as server:
        providers = {
            "gemini": ProviderSettings(
                kind="gemini", model="m-gemini", base_url=server.url, key_env=["GEMINI_API_KEY"]
            ),
            "openai": ProviderSettings(
                kind="openai", model="m-openai", base_url=server.openai_url, key_env=["OPENAI_API_KEY"]
            ),
        }
        settings = LLMSettings(
            order=["gemini", "openai"], providers=providers, first_token_timeout=10, cooldown_seconds=0
        )
        chain = LLMChain(settings)
        chain.warm_up()
        answerer = Answerer(settings, PromptSettings(), chain=chain)
        cases = {
            "clean (gemini answers)": None,
            "gemini 500 → openai": Fail(500),
            "gemini 429 → openai": Fail(429),
            "gemini drops mid-stream → openai": Drop(REPLY, after=3),
        }
        for label, behaviour in cases.items():
            times: list[float] = []
            for i in range(runs + 2):
                if behaviour is not None:
                    server.script("m-gemini", behaviour)
                t = time.perf_counter()
                restarted = False
                for event in answerer.stream("What is the notice period?", EVIDENCE):
                    if isinstance(event, Restart):
                        restarted = True
                    if isinstance(event, Token) and (restarted or not isinstance(behaviour, Drop)):
                        if i >= 2:
                            times.append((time.perf_counter() - t) * 1000)
                        break
            rows.append((label, statistics.median(times)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=60)
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the scripted failures would log warnings

    builder = Answerer(LLMSettings(), PromptSettings()).builder
    t = time.perf_counter()
    for _ in range(200):
        builder.build("What is the notice period?", EVIDENCE * 4, "User: hi\nAssistant: hello")
    build_ms = (time.perf_counter() - t) * 1000 / 200

    rows = run(args.runs)
    print(f"first token: caller's hand − server's first write, ms ({args.runs} runs each, interleaved)")
    print("| provider | path | p50 | p90 |")
    print("|---|---|---|---|")
    p50: dict[tuple[str, str], float] = {}
    for name, path, values in rows:
        p50[(name, path)] = statistics.median(values)
        print(f"| {name} | {path} | {p50[(name, path)]:.2f} | {pct(values, 0.9):.2f} |")
    print()
    print("| provider | Hark adds, p50 (answerer − raw SDK) | chain − raw SDK |")
    print("|---|---|---|")
    for name in ("openai", "groq", "gemini"):
        added = p50[(name, "answerer")] - p50[(name, "raw SDK")]
        print(f"| {name} | {added:.2f} ms | {p50[(name, 'chain')] - p50[(name, 'raw SDK')]:.2f} ms |")
    print()
    print(
        "| scenario (Answerer, loopback, server time-to-first-token 20 ms) | caller's first valid token, p50 ms |"
    )
    print("|---|---|")
    for label, value in failover(max(10, args.runs // 3)):
        print(f"| {label} | {value:.1f} |")
    print(f"\nprompt building (8 blocks + history), before the request: {build_ms:.3f} ms per prompt")


if __name__ == "__main__":
    main()
