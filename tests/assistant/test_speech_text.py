"""assistant/speech_text.py: what a voice is given to say — nothing that must not be read aloud,
abbreviations, symbols, money, ranges, dates and years written out; and the bundled voice saying a
normalised sentence is heard right by Hark's own speech-to-text."""

from __future__ import annotations

import pytest

from assistant.speech_text import clean, for_speech, normalise, year_words


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("The period is 3 months [1].", "The period is 3 months."),
        ("Both say so [2,3] and [1, 2] and [^4] and [1–3].", "Both say so and and and."),
        ("See https://example.com/lease.pdf.", "See the link."),
        ("Read [the lease](http://example.com/lease) now", "Read the lease now"),
        ("Visit www.example.org, then call.", "Visit the link, then call."),
        ("**Bold** and `code` <b>html</b>", "Bold and code html"),
        ("<base> is the base of the log scaling [1].<br>", "base is the base of the log scaling."),
        ('Set <title name> in <div class="x">the window</div>.', "Set title name in the window."),
        ("Press <kbd>Ctrl</kbd> for a List<string>.", "Press Ctrl for a List."),
        ("(2) The thesis is due in term 4 [1].\n(3) See rule (1).", "The thesis is due in term 4. See rule (1)."),
    ],
)
def test_never_read_aloud(text, spoken):
    assert for_speech(text) == spoken


def test_nothing_left_to_say():
    assert for_speech("[1][2]") == ""
    assert for_speech("**[3]** — ") == ""
    assert clean("## Sources [1][2]") == "Sources"


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("Rent rose, e.g. in May.", "Rent rose, for example, in May."),
        ("Rent rose, e.g., in May.", "Rent rose, for example, in May."),
        ("The last day, i.e. Friday.", "The last day, that is, Friday."),
        (
            "Dr. Smith and Mr. and Mrs. Jones met Prof. Lee.",
            "Doctor Smith and Mister and Missus Jones met Professor Lee.",
        ),
        ("Ms. Smith vs. the city, cf. the ruling.", "Miz Smith versus the city, compare the ruling."),
        ("Pens, paper, etc. The end.", "Pens, paper, et cetera. The end."),
        ("Dogs etc. are allowed.", "Dogs et cetera are allowed."),
        (
            "See No. 5 on p. 12 and pp. 14-16, Fig. 3.",
            "See number 5 on page 12 and pages 14 to 16, figure 3.",
        ),
        ("J. R. R. Tolkien wrote it.", "J R R Tolkien wrote it."),
        ("Smith et al. agree, and/or not.", "Smith and others agree, and or not."),
        ("Under § 4 of the act", "Under section 4 of the act"),
    ],
)
def test_abbreviations(text, spoken):
    assert normalise(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("Rent rose 5% or 3.5 %.", "Rent rose 5 percent or 3.5 percent."),
        ("It costs $45.50 or $1 or $5.", "It costs 45 dollars 50 or 1 dollar or 5 dollars."),
        ("€300, 20 £, 950€ and USD 1,000.", "300 euros, 20 pounds, 950 euros and 1,000 dollars."),
        ("A $2.5 million budget, £3bn.", "A 2.5 million dollars budget, 3 billion pounds."),
        ("Wait 2-3 weeks or 9–10 days.", "Wait 2 to 3 weeks or 9 to 10 days."),
        ("Call 555-1234.", "Call 5 5 5, 1 2 3 4."),
        ("Pages 10-5 and 3.5 and 1,900 and the 21st.", "Pages 10-5 and 3.5 and 1,900 and the 21st."),
        (
            "About 1/2 of it, 3/4 of them, 24/7.",
            "About one half of it, three quarters of them, twenty-four seven.",
        ),
        (
            "At 5 km/h over 3 km, 20 °C, 2 kg.",
            "At 5 kilometers per hour over 3 kilometers, 20 degrees Celsius, 2 kilograms.",
        ),
        ("Salt & pepper, 2 + 2 = 4, ~5 left.", "Salt and pepper, 2 plus 2 equals 4, about 5 left."),
    ],
)
def test_symbols_money_ranges(text, spoken):
    assert normalise(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        (
            "Signed in 1998, renewed in 2005.",
            "Signed in nineteen ninety-eight, renewed in two thousand five.",
        ),
        ("Since 2023 and until 2030.", "Since twenty twenty-three and until twenty thirty."),
        (
            "From 1990-1995 and in May 1905.",
            "From nineteen ninety to nineteen ninety-five and in May nineteen oh five.",
        ),
        ("Due 2024-03-12.", "Due March 12, twenty twenty-four."),
        ("In the 1990s and the 2000s.", "In the nineteen nineties and the two thousands."),
        ("It was ca. 1850.", "It was circa eighteen fifty."),
        ("A total of 2000 words, in 1500 dollars.", "A total of 2000 words, in 1500 dollars."),  # not years
    ],
)
def test_years_and_dates(text, spoken):
    assert normalise(text) == spoken


def test_year_words():
    assert [year_words(y) for y in (1100, 1905, 1998, 2000, 2009, 2010, 2024)] == [
        "eleven hundred",
        "nineteen oh five",
        "nineteen ninety-eight",
        "two thousand",
        "two thousand nine",
        "twenty ten",
        "twenty twenty-four",
    ]


def test_the_default_voice_says_a_normalised_sentence_that_hark_hears():
    from bench.wer import normalise as wer_normalise
    from models.settings import TTSSettings
    from models.tts import Synthesiser
    from tests.audio_data import shared_transcriber

    said = for_speech("Dr. Smith says rents rose 5% in 2023 [1], e.g. in London.")
    assert "[" not in said and "%" not in said
    rate, samples = Synthesiser(TTSSettings()).synthesise(said)
    heard = wer_normalise(shared_transcriber("tiny.en").transcribe((rate, samples)).text)
    assert {"doctor", "smith", "rents", "2023", "example", "london"} <= set(heard), heard
    assert "5%" in heard or {"5", "percent"} <= set(heard), heard


def test_a_spaced_star_between_operands_is_read_as_times_and_emphasis_is_not():
    assert for_speech("The footnote font (default: $body.font.master * 0.8 pt) [1].") == \
        "The footnote font (default: $body.font.master times 0.8 pt)."
    assert for_speech("This is **bold** and *em* text.") == "This is bold and em text."
    assert for_speech("* an item") == "an item"
