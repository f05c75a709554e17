"""The words of a question or a sentence that carry its meaning: lower-cased, without English and
German stop words, lightly stemmed ("writes", "writer", "written", "wrote" → "writ"). The extractive
answer ranks sentences and the answerability decision measures coverage with the same words."""

from __future__ import annotations

import functools
import re

from knowledge.short_forms import canonical

WORD = re.compile(r"\w+", re.UNICODE)
STOP = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being do does
    did has have had having i me my we our you your he him his she her it its they them their this that
    these those what which who whom whose when where why how not no nor so than too very can could would
    should will shall may might must there here about into over under again further then once all any both
    each few more most other some such only own same just also up down out off tell please know
    much many get got go goes going need needs want wants someone anyone something anything people
    thing things way ways use used using make made get one ones us am
    between through during before after above below while because until against though although unless whether
    either neither yet via onto upon within without across along among toward towards instead rather even still
    der die das den dem des ein eine einer eines einem einen und oder aber wenn von zu im in am an auf
    mit für aus als ist sind war waren wird werden wurde wurden hat haben hatte ich wir sie er es ihr
    was welche welcher welches wer wen wem wann wo warum wie nicht kein keine so auch nur noch bei nach
    um über unter vor durch gibt gab sich man mich dich mir dir uns euch ihm ihn ihnen mein meine
    meinen meinem meiner dein deine sein seine seinen seinem seiner ihre ihren ihrem ihrer unser unsere
    dieser diese dieses diesem diesen jener jene kann können konnte könnte muss müssen musste soll
    sollte sollen darf dürfen will wollen möchte tun macht machen gemacht dass weil ob denn dann also
    sehr viel viele mehr jetzt schon mal ja nein etwa bis zum zur vom beim ins ans etwas jemand alle
    alles andere anderen gegen ohne seit sowie bzw""".split()
)

# irregular English verb forms to their base: "who wrote" is answered by "written by", "who won" by "winner"
_IRREGULAR = {
    f: base
    for base, forms in {
        "write": "wrote written", "win": "won", "sing": "sang sung", "run": "ran", "build": "built",
        "come": "came", "become": "became", "take": "took taken", "begin": "began begun", "lead": "led",
        "give": "gave given", "hold": "held", "fight": "fought", "choose": "chose chosen", "draw": "drew drawn",
        "sink": "sank sunk", "fly": "flew flown", "eat": "ate eaten", "buy": "bought", "bring": "brought",
        "catch": "caught", "teach": "taught", "think": "thought", "sell": "sold", "tell": "told",
        "speak": "spoke spoken", "steal": "stole stolen", "break": "broke broken", "grow": "grew grown",
        "throw": "threw thrown", "wear": "wore worn", "swim": "swam swum", "rise": "rose risen",
        "fall": "fell fallen", "freeze": "froze frozen", "hide": "hid hidden", "strike": "struck",
        "stand": "stood", "lose": "lost", "meet": "met", "pay": "paid", "send": "sent", "spend": "spent",
        "keep": "kept", "feel": "felt", "shoot": "shot", "drive": "drove driven", "ride": "rode ridden",
        "shake": "shook shaken", "forget": "forgot forgotten", "dig": "dug", "swear": "swore sworn",
    }.items()
    for f in forms.split()
}
_DOUBLED = re.compile(r"([bdgmnprt])\1$")


# a contraction's ending is no word of its own: "what's" is "what", "doesn't" "does", "LilyPond's" "LilyPond"
_CONTRACTION = re.compile(r"\b(can|won)['’]t\b|n['’]t\b|['’](?:s|d|ll|re|ve|m)\b", re.I)
_UNCONTRACTED = {"can": "can", "won": "will"}


def _uncontracted(m: re.Match[str]) -> str:
    return _UNCONTRACTED.get((m.group(1) or "").lower(), "")


def raw_content_words(text: str) -> list[str]:
    """The words of `text` that are not stop words, lower-cased, unstemmed."""
    text = _CONTRACTION.sub(_uncontracted, text.lower()) if "'" in text or "’" in text else text.lower()
    return [w for w in WORD.findall(text) if w not in STOP and w != "_"]


def content_words(text: str, name_parts: bool = False) -> list[str]:
    """The stemmed content words of `text`; with `name_parts`, a name written in camel case
    ("TwoVoicesPerStaff") also gives its parts ("two", "voic", "per", "staff"): the offline answer's
    sentence ranking matches "how do I get two voices per staff?" to the variable that does it."""
    return list(_content_words(text, name_parts))


_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
CAMEL_NAME = re.compile(r"[a-z][A-Z]")  # "MuseScore", "TwoVoicesPerStaff": a name, not words


@functools.lru_cache(maxsize=2048)
def _content_words(text: str, name_parts: bool = False) -> tuple[str, ...]:
    """Cached: a turn reads the same chunks' sentences in several stages (answerability, the answer, the prompt)."""
    words = [stem(w) for w in raw_content_words(text)]
    if name_parts and CAMEL_NAME.search(text):
        for name in (w for w in WORD.findall(text) if CAMEL_NAME.search(w)):
            words += [stem(p.lower()) for p in _CAMEL.findall(name) if len(p) > 1 and p.lower() not in STOP]
    return tuple(words)


@functools.lru_cache(maxsize=65536)
def stem(w: str) -> str:
    w = canonical(w)  # "max" is "maximum" (knowledge/short_forms.py)
    w = _IRREGULAR.get(w, w)
    for suffix in ("ing", "ed", "es", "s", "en", "er", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            base = w[: -len(suffix)]
            w = base[:-1] if len(suffix) > 1 and _DOUBLED.search(base) else base  # "winner" → "win"
            break
    # British spelling doubles a final l before a suffix ("controlled", "labelled"): one l for every form
    return w[:-1] if w.endswith("ll") and len(w) > 4 else w
