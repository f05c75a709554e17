"""Short direct replies: greetings, and questions about the conversation itself.

Greetings never need an LLM. Conversation questions ("what did I ask first?", "how many questions
have I asked?", "what did I just ask?") are answered from the session's memory directly; other
questions about the conversation ("summarise our chat") go to the LLM chain with the history when a
provider is available, and otherwise get the list of questions asked so far.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from assistant.llm.base import Message
from assistant.memory import ConversationMemory

Complete = Callable[[list[Message]], "str | None"]

_THANKS = re.compile(r"\b(thanks?|thank you|cheers)\b", re.I)
_BYE = re.compile(r"\b(bye|goodbye|see you|good night)\b", re.I)
_HOW = re.compile(r"\b(how are you|what'?s up)\b", re.I)
_FIRST = re.compile(r"\b(first|earliest|start|begin)", re.I)
_LAST = re.compile(r"\b(last|previous|just|before that|earlier)\b", re.I)
_COUNT = re.compile(r"\bhow many\b", re.I)

META_SYSTEM = (
    "You are Hark, a voice-first assistant that answers questions from the user's documents. "
    "Answer the user's question about this conversation from the history below, briefly and "
    "truthfully. If the history does not contain it, say so."
)


def greeting_reply(text: str) -> str:
    if _BYE.search(text):
        return "Goodbye! Come back any time you have a question about your documents."
    if _THANKS.search(text):
        return "You're welcome! Anything else you'd like to know?"
    if _HOW.search(text):
        return "I'm ready to help. What would you like to know from your documents?"
    return "Hello! I'm Hark. Ask me anything about your documents, by voice or by typing."


def meta_reply(text: str, memory: ConversationMemory, complete: Complete | None = None) -> tuple[str, str]:
    """(answer, provider) for a question about the conversation."""
    if memory.strategy == "none":
        return (
            "I'm not keeping a memory of this conversation (memory is switched off for this session), "
            "so I can't tell you what was said before.",
            "memory",
        )
    questions = memory.questions
    if not questions:
        return "This is the start of our conversation: you haven't asked me anything yet.", "memory"
    if _COUNT.search(text):
        n = len(questions)
        return f"You've asked me {n} question{'s' if n != 1 else ''} so far in this conversation.", "memory"
    if _FIRST.search(text):
        return f'Your first question was: "{questions[0]}"', "memory"
    if _LAST.search(text):
        return f'Your last question was: "{questions[-1]}"', "memory"
    if complete is not None:
        messages = [
            Message("system", META_SYSTEM),
            Message("user", f"Conversation so far:\n{memory.history()}\n\nQuestion: {text}"),
        ]
        try:
            out = complete(messages)
        except Exception:  # noqa: BLE001 - fall back to the list of questions
            out = None
        if out and out.strip():
            return out.strip(), "llm"
    listed = "; ".join(f'"{q}"' for q in questions[-10:])
    more = f" (the last 10 of {len(questions)})" if len(questions) > 10 else ""
    return f"So far you've asked{more}: {listed}.", "memory"
