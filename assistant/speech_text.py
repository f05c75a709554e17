"""Answer text → the words a voice should say.

`for_speech(text)` = `normalise(clean(text))`:
- `clean` removes what is never read aloud: citation markers ("[1]", "[2, 3]", "[^4]"), markdown,
  HTML tags, table bars; a URL becomes "the link".
- `normalise` writes out what a synthesiser reads badly: abbreviations ("e.g." → "for example",
  "Dr." → "Doctor", which also keeps the voice from pausing as at a full stop), currency ("$45.50"
  → "45 dollars 50"), "%" → "percent", ranges ("2–3 weeks" → "2 to 3 weeks"), ISO dates, years
  ("1998" → "nineteen ninety-eight", "the 1990s"), common fractions and units ("5 km"). Plain
  numbers, decimals and ordinals ("3.5", "1,900", "21st") are left to the voice, which reads them well.
"""

from __future__ import annotations

import re

_CITATION = re.compile(r"\[\^?\d+(?:\s*[,;–-]\s*\^?\d+)*\]")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_LINE_START = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,3}[.)]\s+|\(\d{1,3}\)\s+)", re.MULTILINE)
_MD_EMPHASIS = re.compile(r"\*{1,3}|(?<!\w)_{1,3}|_{1,3}(?!\w)|~~|`+")
_TIMES = re.compile(r"(?<=[\w)]) \* (?=[\w(.$])")  # a lone star between operands, spaced
_URL = re.compile(r"https?://\S+|www\.\S+")
_HTML = re.compile(r"<[^>\n]{1,40}>")
# "<base>", "<title name>": a manual's name for a value, read as its words; an HTML tag is not read
_PLACEHOLDER = re.compile(r"(?<![\w<])<([a-z][a-z0-9_ -]{0,30})>")
_HTML_TAGS = frozenset(
    "a abbr article b big blockquote body br button caption center cite code col dd del details div dl dt "
    "em figcaption figure font footer form h1 h2 h3 h4 h5 h6 head header hr html i img input ins kbd label "
    "li main mark nav nobr ol option p pre q s samp script section select small span strike strong style "
    "sub summary sup table tbody td tfoot th thead tr tt u ul var wbr".split()
)


def citation_span(text: str, start: int) -> int | None:
    """End of a citation marker starting at `start`, else None."""
    m = _CITATION.match(text, start)
    return m.end() if m else None


def clean(text: str) -> str:
    """Remove what should not be read aloud: citations, markdown, URLs, HTML tags, table bars."""
    t = _CITATION.sub("", text)
    t = _MD_LINK.sub(r"\1", t)
    t = _URL.sub(lambda m: "the link" + _trailing_punct(m.group()), t)
    t = _PLACEHOLDER.sub(lambda m: m.group() if m.group(1).split()[0] in _HTML_TAGS else m.group(1).replace("_", " "), t)
    t = _HTML.sub(" ", t)
    t = _MD_LINE_START.sub("", t)
    t = _TIMES.sub(" times ", t)  # "$body.font.master * 0.8": a product, not emphasis
    t = _MD_EMPHASIS.sub("", t)
    t = t.replace("|", ", ").replace("#", " ")
    t = re.sub(r"\s+", " ", t).strip()
    t = re.sub(r"\s+([.,;:!?…])", r"\1", t)
    t = re.sub(r"^[,;:.\s]+", "", t)
    t = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", t)
    return t if any(ch.isalnum() for ch in t) else ""


def _trailing_punct(url: str) -> str:
    m = re.search(r"[.,;:!?)]+$", url)
    return m.group().replace(")", "") if m else ""


# --- abbreviations ---------------------------------------------------------------------------------
_ABBREVIATIONS = [  # (pattern, spoken); patterns are matched case-sensitively at word starts
    (r"e\.\s?g\.(?!,)", "for example,"),
    (r"e\.\s?g\.", "for example"),
    (r"i\.\s?e\.(?!,)", "that is,"),
    (r"i\.\s?e\.", "that is"),
    (r"etc\.(?=\s+[a-z]|\.)", "et cetera"),
    (r"etc\.", "et cetera."),  # a full stop that may end the sentence too
    (r"[Vv]s\.?(?=\s)", "versus"),
    (r"cf\.", "compare"),
    (r"[Aa]pprox\.", "approximately"),
    (r"[Ii]ncl\.", "including"),
    (r"et al\.", "and others"),
    (r"Mr\.", "Mister"),
    (r"Mrs\.", "Missus"),
    (r"Ms\.", "Miz"),
    (r"Dr\.(?=\s+[A-Z])", "Doctor"),
    (r"Prof\.", "Professor"),
    (r"St\.(?=\s+[A-Z])", "Saint"),
    (r"Jr\.", "Junior"),
    (r"Sr\.", "Senior"),
    (r"[Nn]o\.(?=\s*\d)", "number"),
    (r"[Nn]os\.(?=\s*\d)", "numbers"),
    (r"pp\.(?=\s*\d)", "pages"),
    (r"p\.(?=\s*\d)", "page"),
    (r"[Ff]ig\.(?=\s*\d)", "figure"),
    (r"[Ss]ec\.(?=\s*\d)", "section"),
    (r"[Cc]h\.(?=\s*\d)", "chapter"),
    (r"[Vv]ol\.(?=\s*\d)", "volume"),
    (r"ca\.(?=\s*\d)", "circa"),
    (r"([A-Z])\.(?=\s+[A-Z])", r"\1"),  # initials: "J. R. R. Tolkien" without three pauses
    (r"and/or", "and or"),
    (r"§§", "sections"),
    (r"§", "section"),
]
_ABBREV = [(re.compile(r"(?<![\w.])" + p), s) for p, s in _ABBREVIATIONS]

# --- numbers ---------------------------------------------------------------------------------------
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CURRENCIES = {
    "$": ("dollar", "dollars", "cents"),
    "€": ("euro", "euros", "cents"),
    "£": ("pound", "pounds", "pence"),
}
_SCALE = r"(?:\s?(thousand|million|billion|trillion|k|m|bn)\b)?"
_MONEY_BEFORE = re.compile(r"([$€£])\s?(" + _NUM + r")" + _SCALE)
_MONEY_AFTER = re.compile(r"(?<![\w.,])(" + _NUM + r")\s?([€£])")
_ISO_CODE = re.compile(r"\b(USD|EUR|GBP)\s?(" + _NUM + r")\b|(?<![\w.,])(" + _NUM + r")\s?(USD|EUR|GBP)\b")
_CODE_SYMBOL = {"USD": "$", "EUR": "€", "GBP": "£"}
_PERCENT = re.compile(r"(" + _NUM + r")\s?%")
_RANGE = re.compile(r"(?<![\w.,-])(\d+(?:\.\d+)?)\s?[–—-]\s?(\d+(?:\.\d+)?)(?![\w.,-]*\d)")
_PHONE = re.compile(r"(?<![\w-])(?:\d{3}-)?\d{3}-\d{4}(?![\w-])")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DECADE = re.compile(r"\b(1[1-9]|20)(\d)0s\b")
_MONTHS = "January February March April May June July August September October November December".split()
_YEAR_CONTEXT = (
    r"(?:[Ii]n|[Ss]ince|[Ff]rom|[Bb]y|[Uu]ntil|[Tt]ill|[Bb]efore|[Aa]fter|[Aa]round|[Dd]uring|[Yy]ear|"
    r"[Tt]o|and|or|circa|early|late|mid|" + "|".join(_MONTHS) + r"|" + r"\d{1,2}(?:st|nd|rd|th)?,?)"
)
_NOT_A_YEAR = r"(?![.,]\d|\s?%|\s+(?:dollars?|euros?|pounds?|cents|pence|percent|people|words|pages)\b)"
_YEAR = re.compile(r"\b(" + _YEAR_CONTEXT + r")(\s+)(1[1-9]\d\d|20\d\d)\b" + _NOT_A_YEAR)
_FRACTIONS = {
    "1/2": "one half", "1/3": "one third", "2/3": "two thirds", "1/4": "one quarter",
    "3/4": "three quarters", "24/7": "twenty-four seven",
}  # fmt: skip
_FRACTION = re.compile(r"(?<![\w/])(" + "|".join(re.escape(f) for f in _FRACTIONS) + r")(?![\w/])")
_UNITS = {
    "km/h": "kilometers per hour", "mph": "miles per hour", "km": "kilometers", "cm": "centimeters",
    "mm": "millimeters", "kg": "kilograms", "mg": "milligrams", "ml": "milliliters", "m²": "square meters",
    "sq ft": "square feet", "°C": "degrees Celsius", "°F": "degrees Fahrenheit", "kWh": "kilowatt hours",
    "GB": "gigabytes", "MB": "megabytes", "TB": "terabytes", "kHz": "kilohertz", "Hz": "hertz",
}  # fmt: skip
_UNIT = re.compile(
    r"(\d)\s?(" + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True)) + r")(?![\w²])"
)
_SYMBOLS = [
    (re.compile(r"\s&\s"), " and "),
    (re.compile(r"(?<=\d)\s?\+\s?(?=\d)"), " plus "),
    (re.compile(r"(?<=\s)[~≈]\s?(?=\d)|^[~≈]\s?(?=\d)"), "about "),
    (re.compile(r"(?<=\d)\s?[×x]\s?(?=\d)"), " by "),
    (re.compile(r"(?<=[A-Za-z])/(?=[A-Za-z])"), " or "),
    (re.compile(r"\s=\s"), " equals "),
    (re.compile(r"°"), " degrees"),
]

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()  # noqa: E501
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _two_digits(n: int) -> str:
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")


def year_words(year: int) -> str:
    """1998 → "nineteen ninety-eight", 1905 → "nineteen oh five", 2000 → "two thousand",
    2007 → "two thousand seven", 2024 → "twenty twenty-four"."""
    century, rest = divmod(year, 100)
    if 2000 <= year <= 2009:
        return "two thousand" + (f" {_ONES[rest]}" if rest else "")
    if rest == 0:
        return f"{_two_digits(century)} hundred"
    return f"{_two_digits(century)} {'oh ' + _ONES[rest] if rest < 10 else _two_digits(rest)}"


def _decade_words(m: re.Match[str]) -> str:
    century, decade = int(m.group(1)), int(m.group(2))
    if decade == 0:
        return f"{year_words(century * 100)}s" if century != 20 else "two thousands"
    tens = _TENS[decade] if decade > 1 else "ten"
    return f"{_two_digits(century)} {tens[:-1] + 'ies' if tens.endswith('y') else tens + 's'}"


def _say_money(symbol: str, amount: str, scale: str | None = None) -> str:
    one, many, _ = _CURRENCIES[symbol]
    if scale:
        scale = {"k": "thousand", "m": "million", "bn": "billion"}.get(scale.lower(), scale)
        return f"{amount} {scale} {many}"
    whole, _, frac = amount.partition(".")
    unit = one if whole == "1" else many
    if frac and frac.strip("0"):
        return f"{whole} {unit} {int(frac.ljust(2, '0'))}" if len(frac) <= 2 else f"{amount} {many}"
    return f"{whole} {unit}"


def _money_code(m: re.Match[str]) -> str:
    code, amount = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
    return _say_money(_CODE_SYMBOL[code], amount)


def _range(m: re.Match[str]) -> str:
    """ "2-3" → "2 to 3" when it reads as a range (rising, similar sizes); else unchanged."""
    a, b = m.group(1), m.group(2)
    if float(a) < float(b) and (len(a) == len(b) or len(b) <= 3):
        if all(len(x) == 4 and 1100 <= int(x) <= 2099 for x in (a, b)):
            return f"{year_words(int(a))} to {year_words(int(b))}"
        return f"{a} to {b}"
    return m.group()


def _iso_date(m: re.Match[str]) -> str:
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return m.group()
    return f"{_MONTHS[month - 1]} {day}, {year_words(year) if 1100 <= year <= 2099 else year}"


def normalise(text: str) -> str:
    """Write out abbreviations, symbols, currency, ranges, dates and years for a voice."""
    t = text
    for pattern, spoken in _ABBREV:
        t = pattern.sub(spoken, t)
    t = _ISO_DATE.sub(_iso_date, t)
    t = _ISO_CODE.sub(_money_code, t)
    t = _MONEY_BEFORE.sub(lambda m: _say_money(m.group(1), m.group(2), m.group(3)), t)
    t = _MONEY_AFTER.sub(lambda m: _say_money(m.group(2), m.group(1)), t)
    t = _PERCENT.sub(r"\1 percent", t)
    t = _FRACTION.sub(lambda m: _FRACTIONS[m.group(1)], t)
    t = _UNIT.sub(lambda m: f"{m.group(1)} {_UNITS[m.group(2)]}", t)
    t = _PHONE.sub(lambda m: ", ".join(" ".join(g) for g in m.group().split("-")), t)
    t = _RANGE.sub(_range, t)
    t = _DECADE.sub(_decade_words, t)
    t = _YEAR.sub(lambda m: f"{m.group(1)}{m.group(2)}{year_words(int(m.group(3)))}", t)
    for pattern, spoken in _SYMBOLS:
        t = pattern.sub(spoken, t)
    return re.sub(r"\s{2,}", " ", t).strip()


def for_speech(text: str) -> str:
    """The words to say for one piece of answer text ("" when nothing is left to say)."""
    cleaned = clean(text)
    return normalise(cleaned) if cleaned else ""
