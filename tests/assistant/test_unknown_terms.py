"""The unknown-term rule with the bundled English word list and a real library's words."""

from __future__ import annotations

from assistant.unknown_terms import unknown_terms

LIBRARY = sorted({"lilypond", "slur", "slurs", "shortcut", "adding", "score", "scores", "muse", "import", "file", "jupiter"})


def test_a_camel_case_name_the_library_never_mentions_is_unknown_even_when_its_pieces_are_english():
    assert unknown_terms("What's the MuseScore shortcut for adding a slur?", LIBRARY) == ["musescore"]
    assert unknown_terms("what's the musescore shortcut for adding a slur?", LIBRARY) == []  # two English words joined


def test_words_the_library_holds_or_ordinary_words_are_not_terms():
    assert unknown_terms("How do I add a slur in LilyPond?", LIBRARY) == []
    assert unknown_terms("Can I import a file into Lillypond?", LIBRARY) == []  # a typo of a library word
    assert unknown_terms("How do I import a MusicXML file into LilyPond?", LIBRARY) == ["musicxml"]
    # in German only a camel-case name counts: compounds are rarely written as the question joins them
    assert unknown_terms("Wie importiere ich eine MusicXML-Datei in LilyPond?", LIBRARY) == ["musicxml"]
    assert unknown_terms("Kann ich mit LilyPond Gitarrentabulaturen setzen?", LIBRARY) == []
    assert unknown_terms("Wie setze ich einen Bindebogen in LilyPond?", LIBRARY) == []


def test_a_name_one_letter_from_an_english_word_is_a_name_and_a_rare_misspelling_a_typo():
    library = sorted({"asymptote", "renderer", "render", "opengl", "version", "run", "notebook"})
    assert unknown_terms("Does asymptote have a Vulkan renderer?", library) == ["vulkan"]  # not "vulcan"
    assert unknown_terms("how do i run asymptote inside a jupyter notebook", library) == ["jupyter"]
    assert unknown_terms("which asymptote verison added the opengl renderer?", library) == []  # a typo of a library word
    assert unknown_terms("does asymptote work in a cirus?", library) == []  # a typo of "circus", not a term
    assert unknown_terms("how does asymptote classifies renderers?", library) == []  # forms of English words
    assert unknown_terms("does a notebook complicate asymptote?", library) == []  # common English, not in the list


def test_a_question_whether_something_exists_names_nothing_the_library_never_mentions():
    library = sorted({"auto", "multiple", "choice", "scan", "scans", "sheets", "count", "down", "clock", "slides",
                      "slidy", "talk", "limit", "answers", "question", "lilypond", "app", "fürs"})
    from assistant.unknown_terms import absent_asked

    # "android" and "phone" are ordinary English, not rare terms, yet the library never says them
    asked = "is there an android app for auto multiple choice to scan the sheets with my phone?"
    assert unknown_terms(asked, library) == [] and absent_asked(asked, library) == ["android", "phone"]
    assert absent_asked("Is there a limit on how many answers one question can have?", library) == []
    assert absent_asked("Gibt es LilyPond als App fürs iPad?", library) == ["ipad"]
    # written as two words in the evidence ("… a clock will count down"), a compound is no absent word
    slidy = "slidy slides: is there a countdown clock for the talk?"
    assert absent_asked(slidy, library, ["A JavaScript clock will count down to help the speaker."]) == []
    assert absent_asked(slidy, library) == ["countdown"]
    assert absent_asked("How do I scan sheets with my phone?", library) == []  # not a question whether it exists
    assert absent_asked("Can I scan sheets with my phone?", library) == []  # what the user may do: the user's words
    assert absent_asked("Can LilyPond open Sibelius files?", sorted(library + ["files", "open"])) == ["sibelius"]
    german = sorted(library + ["info", "zentrale", "eine"])
    assert absent_asked("Gibt es eine Infozentrale?", german) == []  # a German compound of library words
