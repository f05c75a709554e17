"""The echoing LLM of the hostile suite: `Echo`, a behaviour for `tests.llm_server.LLMServer` that
streams back the prompt it received (system and user text, flattened) — the worst case of a model
that repeats its instructions and context: whatever Hark sends to a provider, the user would see.
The web search side is `tests.serp_server`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.llm_server import LLMServer, Reply


def prompt_text(body: dict[str, Any]) -> str:
    """All text of an OpenAI-style (`messages`) or Gemini-style (`contents`) request body."""
    parts: list[str] = []
    for m in body.get("messages") or []:
        c = m.get("content")
        if isinstance(c, str):
            parts.append(f"<{m.get('role')}> {c}")
        elif isinstance(c, list):
            parts += [f"<{m.get('role')}> {p.get('text', '')}" for p in c if isinstance(p, dict)]
    si = body.get("systemInstruction") or body.get("system_instruction") or {}
    for p in si.get("parts") or []:
        parts.append(f"<system> {p.get('text', '')}")
    for c in body.get("contents") or []:
        for p in c.get("parts") or []:
            parts.append(f"<{c.get('role', 'user')}> {p.get('text', '')}")
    return "\n".join(parts)


@dataclass
class Echo(Reply):
    """Streams back the whole prompt of the request it answers (in ~200-character chunks)."""

    server: LLMServer | None = None

    def chunks(self) -> list[str]:
        assert self.server is not None
        mine = [r for r in self.server.requests if r.behaviour is self]
        text = prompt_text(mine[-1].body) if mine else "(no request)"
        return [text[i : i + 200] for i in range(0, len(text), 200)] or ["(empty prompt)"]


def echo_server() -> tuple[LLMServer, Echo]:
    server = LLMServer(max_lifetime=600).start()
    echo = Echo(server=server)
    server.set_default(echo)
    return server, echo
