"""Does the transcript so far read as a finished question? The text's side of the hands-free end of turn.

Smart-Turn (`models/turn_end.py`) hears how the speech ends; on synthetic voices it scores a
mid-question pause about as high as the end (docs/voice.md). The words tell those apart more often:
"what is the notice period for" or "how do I, um" stop on a word that cannot end an English
question (a conjunction, an article or determiner, a preposition, an auxiliary, a filler), or on a
comma or an ellipsis Whisper writes for speech that trails off. `text_verdict` says:

- "incomplete": it ends on such a word or mark, or it is one word long;
- "complete": it ends on another word and either a stop Whisper put there (`?`, `.`, `!`) or a
  question of at least `min_words` words;
- "unsure": anything else (no stop on a short fragment).

Pure text rules, no model: ~10 µs a call. English only; for other languages it says "unsure".
"""

from __future__ import annotations

import re
from typing import Literal

TextVerdict = Literal["complete", "incomplete", "unsure"]

# words an English question does not end on (a trailing "for" or "about" can end one, "what is it
# for?", but rarely in a question to a library; they are in: a pause after them is more often mid-question)
_CONJUNCTIONS = "and or but nor so because if when whether while although though since unless until than that which who whom whose where"
_DETERMINERS = "a an the this these those my your our their its his her some any each every no another such both either neither"
_PREPOSITIONS = (
    "of to in on for with at by from about into onto over under between through during after before "
    "without within via per like against across along among around toward towards upon"
)
_AUXILIARIES = "is are was were be been being do does did can could should would will shall may might must have has had am"
_FILLERS = "um uh erm er ah hmm mm umm uhm well like i'm i you we they he she it's what's how's"
_OPEN = frozenset(" ".join((_CONJUNCTIONS, _DETERMINERS, _PREPOSITIONS, _AUXILIARIES, _FILLERS)).split())
_QUESTION_WORDS = frozenset("what how why when where which who whom whose is are do does did can could should would will".split())
_TOKEN = re.compile(r"[\w']+")
_TRAILING_OFF = ("...", "…", ",", "-", "—", ";", ":")


def text_verdict(text: str, min_words: int = 4) -> TextVerdict:
    """"complete", "incomplete" or "unsure" for the transcript of the speech so far."""
    stripped = text.strip()
    tokens = _TOKEN.findall(stripped.lower())
    if not tokens:
        return "unsure"
    if not stripped.isascii():
        return "unsure"  # the word lists are English
    if len(tokens) == 1 or stripped.endswith(_TRAILING_OFF):
        return "incomplete"
    if tokens[-1] in _OPEN:
        return "incomplete"
    if stripped[-1] in "?.!":
        return "complete"
    if tokens[0] in _QUESTION_WORDS and len(tokens) >= min_words:
        return "complete"
    return "unsure"
