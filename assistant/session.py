"""Per-session state: one per browser tab, terminal chat or `ask`.

Models and the knowledge store are shared by every session (they live in the Assistant); everything
a person can switch or that remembers the conversation lives here, so two sessions never see each
other's memory or switches.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from assistant.config import HarkConfig
from assistant.memory import ConversationMemory, Exchange, Strategy, Summariser


@dataclass
class Session:
    """One conversation. Create it with `Assistant.new_session()` (or `Session.from_config`)."""

    memory: ConversationMemory
    always_web_search: bool = False
    reasoning: str = "rag"  # reasoning strategy, see assistant/prompts
    profile: str = "default"  # prompt profile, see assistant/prompts
    speak_answers: bool = False
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    turns: int = 0
    _cancel: threading.Event | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # the spoken turn run ahead of the user's last word (assistant.speculation.Speculation)
    _ahead: Any = field(default=None, repr=False)
    # the adopted turn run ahead, whose answer's first piece of speech it synthesises (`first_piece`)
    _spoken: Any = field(default=None, repr=False)

    @classmethod
    def from_config(cls, cfg: HarkConfig, summariser: Summariser | None = None) -> Session:
        memory = ConversationMemory(
            strategy=cfg.memory.strategy,
            window_exchanges=cfg.memory.window_exchanges,
            token_budget=cfg.memory.history_token_budget,
            summariser=summariser,
        )
        return cls(memory=memory, reasoning=cfg.prompts.reasoning, profile=cfg.prompts.profile)

    # ---- switches ---------------------------------------------------------------------------------
    @property
    def memory_strategy(self) -> Strategy:
        return self.memory.strategy

    @memory_strategy.setter
    def memory_strategy(self, value: Strategy) -> None:
        self.memory.strategy = value

    # ---- the running turn -------------------------------------------------------------------------
    def begin_turn(self, cancel: threading.Event | None = None) -> threading.Event:
        """Register the cancel Event of the turn that starts now (a fresh one unless given)."""
        event = cancel if cancel is not None else threading.Event()
        with self._lock:
            self._cancel = event
            self.turns += 1
        return event

    def end_turn(self, cancel: threading.Event) -> None:
        with self._lock:
            if self._cancel is cancel:
                self._cancel = None

    def cancel(self) -> bool:
        """Stop the running turn, if any. True when there was one."""
        with self._lock:
            event = self._cancel
        if event is None:
            return False
        event.set()
        return True

    @property
    def busy(self) -> bool:
        with self._lock:
            return self._cancel is not None

    # ---- the turn run ahead (assistant.speculation) ------------------------------------------------
    def put_ahead(self, speculation: Any) -> Any:
        """Keep `speculation` as the turn run ahead; returns the one it replaces (to be dropped)."""
        with self._lock:
            old, self._ahead = self._ahead, speculation
        return old

    def take_ahead(self, owner: Any = None) -> Any:
        """The turn run ahead, taken out (None when there is none, or when `owner` is given and it
        belongs to another utterance)."""
        with self._lock:
            found = self._ahead
            if found is None or (owner is not None and found.owner is not owner):
                return None
            self._ahead = None
            return found

    def put_spoken(self, speculation: Any) -> None:
        """The adopted turn run ahead: the first piece of its answer is synthesised there."""
        with self._lock:
            self._spoken = speculation

    def take_spoken(self, text: str) -> Any:
        """The audio Future synthesised ahead for `text`, the answer's first piece, once (None when
        there is none for it)."""
        with self._lock:
            found, self._spoken = self._spoken, None
        piece = getattr(found, "first_piece", None)
        return piece[1] if piece is not None and piece[0] == text else None

    def remember(self, exchange: Exchange) -> None:
        self.memory.add(exchange)

    def reset(self) -> None:
        """Forget the conversation (the switches stay)."""
        self.memory.clear()
