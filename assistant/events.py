"""Typed events yielded by `Assistant.respond` — the one protocol the Gradio app, the terminal
chat and `ask --json` all render."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from knowledge.types import Hit, Retrieval

NOT_KNOWN = "I'm sorry, that information is not known to me."


@dataclass(frozen=True)
class Streamed:
    """Speech already transcribed while the user spoke (models.streaming): the turn skips decoding."""

    text: str
    seconds: float  # what the user waited for the text at release
    duration: float  # seconds of audio
    speech_seconds: float | None = None
    avg_logprob: float | None = None
    no_speech_prob: float | None = None


@dataclass
class AudioInput:
    """Speech for one turn: a file path, or samples with their rate (what gr.Audio gives), or what
    what the live transcription already heard (`streamed`)."""

    path: str | None = None
    samples: Any = None  # numpy array, any channel count
    sample_rate: int | None = None
    streamed: Streamed | None = None


@dataclass
class Transcript:
    text: str
    seconds: float


@dataclass
class IntentEvent:
    label: str  # rag_search | web_search | greeting | conversation_meta | persona | refusal
    confidence: float
    source: str = "classifier"  # classifier | switch | persona | threshold


@dataclass
class Rewritten:
    original: str
    query: str


@dataclass
class Sources:
    """The evidence of the answer that follows: the search's own result, as it gave it."""

    retrieval: Retrieval
    kind: str = "documents"  # documents | web

    @property
    def hits(self) -> list[Hit]:
        return self.retrieval.hits

    @property
    def candidates(self) -> list[Hit]:
        """The first-stage pool, for the rerank picture (empty for the web)."""
        return self.retrieval.candidates


@dataclass
class Token:
    text: str


@dataclass
class Notice:
    text: str
    level: str = "info"  # info | warning | error


@dataclass
class Restart(Notice):
    """A provider failed mid-stream: discard the partial answer; the tokens that follow start it again."""

    level: str = "warning"


@dataclass
class Answer:
    text: str
    provider: str  # the provider that produced the final text, or "extractive", "persona", …
    cited: list[Hit] = field(default_factory=list)  # the sources the answer cites, renumbered 1..n
    not_known: bool = False


@dataclass
class Done:
    answer: Answer
    trace: dict[str, Any]


Event = Transcript | IntentEvent | Rewritten | Sources | Token | Notice | Done
