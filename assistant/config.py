"""Hark's one validated configuration: `config.yaml` → `HarkConfig`.

Unknown keys are rejected. Secrets never live here: they come from environment variables
(optionally a `.env` file beside the config) and are read through `secret()`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from knowledge.settings import IngestSettings, RetrievalSettings, StoreSettings
from models.settings import EmbedderSettings, IntentSettings, JudgeSettings, SpeechSettings, TTSSettings

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "config.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProviderSettings(_Strict):
    kind: Literal["gemini", "openai", "groq", "openai_compatible"]
    model: str
    base_url: str | None = None
    # environment variables tried in order for the key; empty → no key needed (local servers)
    key_env: list[str] = []
    enabled: bool = True


class LLMSettings(_Strict):
    order: list[str] = ["gemini", "openai", "groq", "local"]
    providers: dict[str, ProviderSettings] = {}
    connect_timeout: float = Field(5.0, gt=0)
    first_token_timeout: float = Field(20.0, gt=0)
    total_timeout: float = Field(120.0, gt=0)
    cooldown_seconds: float = Field(60.0, ge=0)
    failures_before_cooldown: int = Field(2, ge=1)
    temperature: float = Field(0.2, ge=0, le=2)
    max_tokens: int = Field(1024, ge=16)
    extractive_sentences: int = Field(3, ge=1)
    # rank the extractive answer's sentences with the embedder too (finds paraphrases; costs one
    # embedding batch per fallback answer — see docs/results.md "Answers")
    extractive_embedding: bool = False


class PromptSettings(_Strict):
    profile: str = "default"  # role configuration, see assistant/prompts/profiles.yaml
    reasoning: str = "rag"  # see assistant/prompts/reasoning.yaml
    relevance_check: bool = False  # ask the LLM whether the context is relevant first
    context_blocks: int = Field(8, ge=1)  # evidence chunks given to the LLM as numbered blocks
    # each block's characters by its rank (the last repeats): the first block more, later ones the
    # sentences around the question's words (assistant/prompts/window.py); one number: every block
    block_chars: list[int] = Field(default_factory=lambda: [2500, 1000, 500])

    @field_validator("block_chars", mode="before")
    @classmethod
    def _budgets(cls, v: object) -> object:
        return [v] if isinstance(v, int) else v

    @field_validator("block_chars")
    @classmethod
    def _budgets_positive(cls, v: list[int]) -> list[int]:
        if not v or any(n < 200 for n in v):
            raise ValueError("block_chars: one or more budgets of at least 200 characters")
        return v


# the memory strategies (assistant/memory.py); the app, the terminal and the memory read this one list
MemoryStrategy = Literal["window", "buffer", "summary", "none"]


class MemorySettings(_Strict):
    strategy: MemoryStrategy = "window"
    window_exchanges: int = Field(10, ge=1)
    history_token_budget: int = Field(1500, ge=100)


class RoutingSettings(_Strict):
    # below this classifier confidence a turn goes to rag_search
    confidence_threshold: float = Field(0.5, ge=0, le=1)
    rewrite_follow_ups: bool = True
    # a follow-up ("tell me more", "when did she die?") takes the path of the question it follows
    follow_ups_inherit: bool = True
    # a web_search classification below this confidence first checks the library: relevant
    # documents → answered from them; otherwise the web. 1.0 = always check, unless the question
    # asks for the web itself ("search the web…", "latest news"); the session switch always goes
    # to the web
    web_min_confidence: float = Field(1.0, ge=0, le=1)
    # search the documents for the turn's own words while the intent is classified (2 cores: the
    # two run at once); the result is used when the turn searches for that same text
    prefetch_search: bool = True


class WebSearchSettings(_Strict):
    base_url: str = "https://serpapi.com"
    engine: str = "google"
    max_results: int = Field(20, ge=1, le=100)
    timeout: float = Field(8.0, gt=0)
    key_env: str = "SERPAPI_API_KEY"


class TraceSettings(_Strict):
    path: str = "data/traces.jsonl"
    log_path: str = "data/hark.log"


class UISettings(_Strict):
    host: str = "127.0.0.1"
    port: int = Field(7860, ge=0, le=65535)
    concurrency_limit: int = Field(4, ge=1)
    max_queue: int = Field(64, ge=1)
    library_dir: str = "data/library"
    max_upload_mb: float = Field(50.0, gt=0)
    max_upload_files: int = Field(200, ge=1)
    share_user_env: str = "HARK_USER"
    share_password_env: str = "HARK_PASSWORD"


class HarkConfig(_Strict):
    # errors never echo the input: a misplaced secret (e.g. in store.storage_options) stays hidden
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    speech: SpeechSettings = Field(default_factory=SpeechSettings)
    tts: TTSSettings = Field(default_factory=TTSSettings)
    intent: IntentSettings = Field(default_factory=IntentSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    prompts: PromptSettings = Field(default_factory=PromptSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    routing: RoutingSettings = Field(default_factory=RoutingSettings)
    websearch: WebSearchSettings = Field(default_factory=WebSearchSettings)
    trace: TraceSettings = Field(default_factory=TraceSettings)
    ui: UISettings = Field(default_factory=UISettings)

    _base_dir: Path = PrivateAttr(default_factory=lambda: DEFAULT_CONFIG.parent)

    @property
    def base_dir(self) -> Path:
        return self._base_dir

    def path(self, value: str | os.PathLike[str]) -> Path:
        """Resolve a configured path against the folder of the config file."""
        p = Path(value).expanduser()
        return p if p.is_absolute() else (self._base_dir / p).resolve()

    @property
    def data_dir(self) -> Path:
        return self.path(self.store.data_dir)

    @property
    def lancedb_uri(self) -> str:
        if self.store.uri:
            uri = self.store.uri
            return uri if "://" in uri else str(self.path(uri))
        return str(self.data_dir / "lancedb")


def load_config(path: str | os.PathLike[str] | None = None, **overrides: object) -> HarkConfig:
    """Load and validate `config.yaml` (or `path`); also reads `.env` beside it into the environment."""
    cfg_path = Path(path).expanduser().resolve() if path else DEFAULT_CONFIG
    raw: dict = {}
    if cfg_path.exists():
        raw = yaml.safe_load(cfg_path.read_text(encoding="utf-8")) or {}
        if not isinstance(raw, dict):
            raise ValueError(f"{cfg_path}: the top level must be a mapping")
    elif path:
        raise FileNotFoundError(f"config file not found: {cfg_path}")
    raw.update(overrides)
    cfg = HarkConfig.model_validate(raw)
    cfg._base_dir = cfg_path.parent
    _load_dotenv(cfg_path.parent / ".env")
    return cfg


def _load_dotenv(env_file: Path) -> None:
    if env_file.is_file():
        try:
            from dotenv import load_dotenv

            load_dotenv(env_file, override=False)
        except ImportError:  # pragma: no cover - python-dotenv is a pinned dependency
            pass


def secret(*names: str) -> str | None:
    """First non-empty environment variable among `names`. Never log the result."""
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None
