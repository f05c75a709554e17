"""What kind of answer a question asks for, and whether a sentence holds it: a number (how many,
how long, when), a name the question does not hold (who, where), a date (when), a cause (why), the
definition of X ("what is X"); and whether it asks for one fact (answered in at most two sentences)
or for steps, a list or an explanation. Used to rank the extractive answer's sentences and by the
answerability decision (`lacks_asked_number`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.llm.words import STOP, WORD, content_words, stem

_FACTUAL = re.compile(
    r"^\s*(who|whom|whose|what|which|when|where|how (many|much|long|old|far|big|often)|in what|"
    r"is|are|was|were|does|do|did|can|wer|was|welche[rsmn]?|wann|wo|wie (viele?|lange|alt)|"
    r"in welche[rmn]?)\b",
    re.IGNORECASE,
)
ASKS_NUMBER = re.compile(
    r"\b(how (much|many|long|old|far|big|large|often|tall|high)|when|what (year|date|time|percentage)|"
    r"(which|what) (?:[\w-]+ )?(range|port)|"
    r"in (what|which) year|wie (viele?|lange|alt|hoch|gro(ß|ss))|wann|in welchem jahr)\b",
    re.IGNORECASE,
)
NUMBER = re.compile(  # a digit inside a name or code ("x11", "n=0") states no amount
    r"(?<![\w=])\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
    r"hundred|thousand|million|billion|half|dozen|ein|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|"
    r"hundert|tausend|millionen?)\b",
    re.IGNORECASE,
)
# what kind of answer a question asks for: a who/where question is answered by a sentence naming
# someone or something the question does not (a capitalised word not opening the sentence), a when
# question by one holding a year or a month
_ASKS_NAME = re.compile(r"^\s*(who|whom|whose|where|wer|wen|wem|wessen|wo|woher|wohin)\b|\b(who|whom|whose|where)\b", re.I)
# a where question about software is answered by where it is: a path, a link, a mailing list, a channel
_ASKS_PLACE = re.compile(r"^\s*(where|wo|woher|wohin)\b|\bwhere\b", re.I)
_PLACE = re.compile(r"(?:^|\s)~?/[\w.-]+/|https?://|\b(mailing list|channel|forum|directory|folder|website|"
                    r"Mailingliste|Verzeichnis|Ordner)\b", re.I)
# "what should the symbols file be called?" asks for a name: "… a symbols file named debian/package.symbols"
_ASKS_CALLED = re.compile(r"^\s*what\b.*\b(called|named)\s*\??\s*$", re.I)
_NAMING = re.compile(r"\b(named|called)\s+[\"“‘']?[\w./~-]*[\w/.~][\w./-]*", re.I)
# a why question is answered by a sentence giving a cause ("… as this will cause cron to ignore the file")
_ASKS_REASON = re.compile(r"^\s*(why|warum|wieso|weshalb)\b|\bwhy\b", re.I)
_REASON = re.compile(r"\b(because|caus(e|es|ed|ing)|due to|as a result|so that|in order to|therefore|otherwise|reason|"
                     r"weil|deshalb|daher|damit|wegen|sonst)\b", re.I)
_ASKS_DATE = re.compile(r"^\s*(when|wann)\b|\b(what|which) year\b|\bin welchem jahr\b", re.I)
# "which font does it use by default?" is answered by a sentence that states a default: "The default
# line width is 0.5 bp", "Defaults to 300.", "… (default: USletter)", not one that only says the word
# … or what happens when it is not given: "if I don't set RandomSeed?", "if I give none?"
_ASKS_DEFAULT = re.compile(r"\bdefault\b|\bstandardmäßig\b|\bvoreingestellt\b|\bstandardwert\b|"
                           r"\bif (?:i|you|we|one) (?:do ?n[o'’]?t|never) (?:set|specify|give|choose|pass|provide|write)\b|"
                           r"\bif (?:i|you|we|one) (?:set|specify|give|write) (?:none|nothing|no \w+)\b|"
                           r"\bwithout (?:setting|specifying|giving|choosing)\b|"
                           r"\bwenn (?:ich|man|du|sie) (?:keinen?|keine[rms]?|nichts)\b(?:\s+\w+){0,3}\s+(?:angebe|angibt|angeben|setze|setzt|wähle|wählt)\b", re.I)
_STATES_DEFAULT = re.compile(
    r"(?<!by )\bdefault(?: value)?(?:\s+[\w.-]+){0,4}?\s+(?:is|are|will be|ist|sind)\s+\S|\bdefaults?\s+to\s+\S|"
    r"\(default:\s*\S|\((?:the|this is the) default\)|\b(?:is|are)\s+\S+(?:\s+\S+)?\s+by default\b|"
    r"\bstandardmäßig\s+(?:ist|sind|wird)\b|\b(?:ist|sind)\s+standardmäßig\b|"
    r"\bstandardwert\b(?:\s+[\w.-]+){0,4}?\s+(?:ist|sind|beträgt)\b|\bvoreingestellt\b|\bals (?:Standard|Voreinstellung)\b",
    re.I,
)
_DEFAULT_WORDS = frozenset(content_words("default defaults value values standardmäßig voreingestellt standardwert wert"))
_CAPITAL = re.compile(r"^[A-ZÄÖÜÀ-ÝĀ-Ž][\w'’-]+$")
_DATE = re.compile(
    r"\b(1\d{3}|20\d{2})\b|\b(January|February|March|April|May|June|July|August|September|October|"
    r"November|December|Januar|Februar|März|Juni|Juli|Oktober|Dezember)\b"
)


# a question that asks for steps, a list or an explanation may take a third sentence
_STEPS = re.compile(r"\b(how (do|can|should|would|could|does) (i|we|you|one)|how to|steps?|explain|describe|list|why|"
                    r"wie (kann|muss|soll|mache) (ich|man)|warum|erkläre|beschreibe)\b", re.IGNORECASE)


def is_factual(question: str) -> bool:
    """A question asking for one fact (who/what/when/…, or anything short that does not ask for
    steps, a list or an explanation): answered in at most two sentences."""
    if _STEPS.search(question):
        return False
    return bool(_FACTUAL.match(question)) or len(question.split()) <= 8 or bool(re.search(r"\?\s*$", question))


def lacks_asked_number(question: str, sentences: Sequence[str]) -> bool:
    """The question asks for a number or a date (how many, when, wie viele…) and none of
    `sentences` holds one (a year or a month for "when")."""
    if not ASKS_NUMBER.search(question):
        return False
    pattern = _DATE if _ASKS_DATE.search(question) else NUMBER
    return not any(pattern.search(s) for s in sentences)


def answer_kind(question: str, sentence: str, about: str = "") -> bool:
    """Whether `sentence` holds the kind of answer `question` asks for: a name the question does not
    hold (who/where), a year or a month (when), a cause (why), a stated default (… by default?, … if
    I don't set it?) of the thing asked about (named in the sentence or in `about`, the definition
    list entry it belongs to), what a thing is named ("what should it be called?"). False for other questions."""
    if _ASKS_NAME.search(question):
        asked = {stem(w.lower()) for w in WORD.findall(question)}
        words = (w.strip("\"'“”‘’()[],.;:!?") for w in sentence.split()[1:])  # the first is capitalised anyway
        # "The", "In" inside a title name no one; a name the question holds (in any form) is no answer
        if any(_CAPITAL.match(w) and w.lower() not in STOP and stem(w.lower()) not in asked for w in words):
            return True
        return bool(_ASKS_PLACE.search(question)) and bool(_PLACE.search(sentence))
    if _ASKS_DATE.search(question):
        return bool(_DATE.search(sentence))
    if _ASKS_REASON.search(question):
        return bool(_REASON.search(sentence))
    if _ASKS_DEFAULT.search(question) and not _STEPS.search(question):
        # … of the thing asked about: another parameter's "(default: 0)" is no answer
        shared = set(content_words(question)) & set(content_words(f"{about} {sentence}"))
        return bool(_STATES_DEFAULT.search(sentence)) and bool(shared - _DEFAULT_WORDS)
    if _ASKS_CALLED.search(question):
        return bool(_NAMING.search(sentence))
    return False


# "what is X", "what does X mean", "what's X", "define X": the sentence that defines X answers it
_WHAT_IS = re.compile(r"^\s*(?:what(?:'s| is| are| does)|define|was (?:ist|sind|bedeutet))\s+(?:an? |the |der |die |das |ein |eine )?"
                      r"[‘'\"“]?(?P<x>[^?‘'\"”]+?)[’'\"”]?\s*(?:mean|stand for|bedeuten)?\s*(?:in \w+)?\s*\??\s*$", re.I)


def defines_asked(question: str) -> bool:
    """Whether `question` is a "what is X" question (`defines` can say which sentence answers it)."""
    return _WHAT_IS.match(question) is not None


def defines(question: str, sentence: str) -> bool:
    """Whether `sentence` defines what a "what is X" question asks about: it opens with X (after
    an article) and goes on with "is", "are", "means", "stands for", "refers to", or a colon or dash."""
    m = _WHAT_IS.match(question)
    if not m:
        return False
    asked = " ".join(m.group("x").split())
    # "what are virtual packages?" is defined by "A virtual package is …"
    x = re.escape(asked) if not re.search(r"[^s]s$", asked) or len(asked) < 5 else f"(?:{re.escape(asked)}|{re.escape(asked[:-1])})"
    pattern = rf"^\W*(?:an? |the |der |die |das |ein |eine )?[‘'\"“]?{x}s?[’'\"”]?(?:\s*\([^)]*\))?\s*(?:is|are|means?|stands? for|refers? to|ist|sind|bedeutet|:|—|–|-)\s"
    if re.match(pattern, sentence, re.I):
        return True
    # the long form names X: "… 'graphical object' (commonly called 'grob's …)", "… Archive Network (CRAN)"
    named = rf"\b(?:called|known as|termed|short for|abbreviated(?: as| to)?|genannt)\s+[‘'\"“]?{x}(?:s|’s|'s)?\b|\w\s+\(\s*[‘'\"“]?{x}[’'\"”]?\s*\)"
    return re.search(named, sentence, re.I) is not None
