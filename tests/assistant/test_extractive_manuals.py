"""The extractive answer on the layouts of real manuals (flex, gnuplot, Graphviz): definition lists,
page references, pointers elsewhere, code, and words that every page of a manual holds."""

from __future__ import annotations

from assistant.llm.extractive import ExtractiveAnswerer, stem
from knowledge.sentences import whole_sentences
from knowledge.types import Hit, LibraryWords


def _hit(text: str, source: str = "flex.pdf") -> Hit:
    return Hit("c1", source, "Lexical Analysis with Flex", text, 0.8, dense_score=0.6)


def test_a_definition_under_its_term_is_one_whole_sentence():
    text = (
        "There are a number of special directives which can be included within an action:\n\nECHO\n\n"
        "copies yytext to the scanner's output.\n\nREJECT\n\ndirects the scanner to proceed on to the "
        "second best rule which matched the input. The rule is chosen as described above.\n\n"
        "-i, --case-insensitive\n\ninstructs flex to generate a case-insensitive scanner."
    )
    assert whole_sentences(text) == [
        "There are a number of special directives which can be included within an action:",
        "ECHO copies yytext to the scanner's output.",
        "REJECT directs the scanner to proceed on to the second best rule which matched the input.",
        "The rule is chosen as described above.",
        "-i, --case-insensitive instructs flex to generate a case-insensitive scanner.",
    ]
    answer = ExtractiveAnswerer().answer("What does REJECT do?", [_hit(text)])
    assert answer.startswith("REJECT directs the scanner to proceed on to the second best rule"), answer


def test_a_sentence_goes_on_after_a_code_line_ending_in_a_semicolon():
    # Asymptote's manual: the code of each half stands on a line of its own
    text = ("The standard 140 RGB X11 colors can be imported with the command\n\nimport x11colors;\n\nand the standard "
            "68 CMYK TEX colors can be imported with the command\n\nimport texcolors;\n\nNote that there is some "
            "overlap between these two standards.")
    assert whole_sentences(text)[0] == ("The standard 140 RGB X11 colors can be imported with the command import "
                                        "x11colors; and the standard 68 CMYK TEX colors can be imported with the "
                                        "command import texcolors;")
    answer = ExtractiveAnswerer().answer("How do I import the standard CMYK TeX colors?", [_hit(text, "asymptote.pdf")])
    assert "import texcolors" in answer, answer


def test_a_sentence_broken_after_an_abbreviation_is_joined_again():
    # the German LilyPond manual: a line break after "(engl." reached the text as a blank line
    text = ("Aber gibt es eine Eigenschaft für die Dicke eines Legatobogens (engl.\n\nslur), und wenn es sie gibt, "
            "auf welche Weise lässt sie sich verändern? Hier kommt die Referenz der Interna zur Geltung.\n\n"
            "Tools such as the flex scanner, e.g.\n\nthe one in this manual, read it.")
    assert whole_sentences(text) == [
        "Aber gibt es eine Eigenschaft für die Dicke eines Legatobogens (engl. slur), und wenn es sie gibt, auf "
        "welche Weise lässt sie sich verändern?",
        "Hier kommt die Referenz der Interna zur Geltung.",
        "Tools such as the flex scanner, e.g. the one in this manual, read it.",
    ]


def test_a_sentence_opening_with_a_command_is_kept_and_the_rest_of_a_cut_one_is_not():
    text = (
        "The title is centred at the top.\n\nset title adds a title to the plot and keeps it for every "
        "later plot.\n\ngnuplot 5.4\n\nor a function used in the plot command as its title.\n\n"
        "Figure 3\n\nthe rest of a sentence that began before the figure."
    )
    assert whole_sentences(text) == [
        "The title is centred at the top.",
        "set title adds a title to the plot and keeps it for every later plot.",
        "Figure 3",  # a label (the extractive answer quotes no piece this short); "gnuplot 5.4" is a header
    ]


def test_a_page_reference_does_not_end_a_sentence_and_a_pointer_is_no_answer():
    text = (
        "Log scaling may be set on the x, y, z and cb axes. See set xtics (p. 199). "
        "The command unset logscale turns off log scaling for all axes (pp. 12-14). "
        "For tricky behavior, see case and character ranges, page 12."
    )
    assert "See set xtics (p. 199)." in whole_sentences(text)
    assert whole_sentences("Rome was the largest city c. 100 BC. The SRT Division (Chrysler Corp. SRT Vehicles) "
                           "replaced R/T models. It was approx. 5 km long.") == [
        "Rome was the largest city c. 100 BC.",
        "The SRT Division (Chrysler Corp. SRT Vehicles) replaced R/T models.",
        "It was approx. 5 km long.",
    ]
    answer = ExtractiveAnswerer().answer("What does set logscale do?", [_hit(text, "gnuplot.pdf")])
    assert "See " not in answer and "see " not in answer and "(p [" not in answer, answer
    assert "log scaling" in answer


def test_a_placeholder_opens_a_sentence_and_the_answer_reads_it():
    text = (
        "Logscale\n\nSyntax:\n\nset logscale <axes> {<base>}\n\nwhere <axes> may be any combinations of x, "
        "x2, y, y2, z, cb, and r in any order. <base> is the base of the log scaling (default is base 10). "
        "If no axes are specified, the command affects all axes except r."
    )
    kept = whole_sentences(text)
    assert "<base> is the base of the log scaling (default is base 10)." in kept
    assert whole_sentences("Pass a value, e.g. <n> is the count. It ends.") == ["Pass a value, e.g. <n> is the count.", "It ends."]
    assert not any(s.startswith("where ") or s.endswith("in any order. <base> is the base") for s in kept)
    answer = ExtractiveAnswerer().answer("What does set logscale do?", [_hit(text, "gnuplot.pdf")])
    assert "base of the log scaling" in answer, answer


def test_an_attribute_line_after_a_label_is_a_whole_sentence():
    text = (
        "The default is true for dot, and false for all other layouts.\n\n(dot-specific attributes)\n\n"
        "nodesep=f sets the minimum separation between nodes.\n\nranksep=f sets the minimum separation "
        "between ranks.\n\nrankdir=LR|RL|BT requests a left-to-right, right-to-left, or bottom-to-top, drawing."
    )
    assert whole_sentences(text) == [
        "The default is true for dot, and false for all other layouts.",
        "nodesep=f sets the minimum separation between nodes.",
        "ranksep=f sets the minimum separation between ranks.",
        "rankdir=LR|RL|BT requests a left-to-right, right-to-left, or bottom-to-top, drawing.",
    ]
    answer = ExtractiveAnswerer().answer("What does the rankdir attribute request?", [_hit(text, "dot.1.pdf")])
    assert answer.startswith("rankdir=LR|RL|BT requests a left-to-right"), answer


def test_a_short_definition_list_item_the_reader_wrote_is_a_whole_sentence():
    # the PDF reader writes a definition list's term before its description ("extra: …"); five words
    # in lower case would otherwise be taken for the rest of a sentence cut by a page break
    text = (
        "optional: This is the default priority for the majority of the archive.\n\n"
        "extra: This priority is deprecated. Use the optional priority instead. This priority should be "
        "treated as equivalent to\n\noptional.\n\nThe extra priority was previously used for packages "
        "that conflicted with other packages."
    )
    assert "extra: This priority is deprecated." in whole_sentences(text)
    answer = ExtractiveAnswerer().answer("Is Priority: extra still a thing?", [_hit(text, "debian-policy.pdf")])
    assert "deprecated" in answer.split(".")[0], answer


def test_code_of_a_manual_is_not_quoted():
    text = "REJECT makes the scanner try the next best rule.\n\n%% a ab abc abcd.|\\n ECHO; REJECT;"
    answer = ExtractiveAnswerer().answer("What does REJECT do in a scanner?", [_hit(text)])
    assert "%%" not in answer and "|" not in answer, answer
    glued = ("Thus the first example below will work as expected, but the second will not. set term x11 "
             "enhanced font \"arial,15\" set title ’{/=20 Big} Medium {/=5 Small}’\n\nPlot windows remain open.")
    answer = ExtractiveAnswerer().answer("Which example of an enhanced font will work?", [_hit(glued, "gnuplot.pdf")])
    assert answer.startswith("Thus the first example below will work as expected, but the second will not [1]."), answer
    assert "{" not in answer and "arial" not in answer, answer


def test_a_word_the_whole_library_repeats_weighs_less_than_a_rare_one():
    """"flex" and "action" are on every page of the flex manual, "reject" on a few: with the
    library's word counts the sentence about REJECT comes first; from the sentences alone it would not."""
    text = (
        "Every flex action runs when the rule of that action matches the input. "
        "REJECT directs the scanner to proceed on to the second best rule."
    )
    question = "What does the REJECT action do in flex?"
    counts = {"action": 400, "flex": 2500, "reject": 6, "directs": 3, "every": 90, "rule": 700}
    words = LibraryWords(sorted(counts), [counts[w] for w in sorted(counts)], total=300)
    assert words.idf(stem("flex"), stem) < words.idf(stem("reject"), stem)
    ex = ExtractiveAnswerer(max_sentences=1)
    assert ex.answer(question, [_hit(text)]).startswith("Every flex action")
    first = ex.rank(question, [_hit(text)], words)[0]
    assert first.text.startswith("REJECT directs the scanner")
    assert ex.rank(question, [_hit(text)], tuple(words))[0].text.startswith("Every flex action")  # no counts


def test_a_table_row_and_a_default_after_an_option_are_answers():
    rows = (
        "65534: User nobody. The corresponding gid refers to the group nogroup.\n\n"
        "65535: This value must not be used, because it was the error return sentinel value."
    )
    assert ExtractiveAnswerer().answer("uid of nobody?", [_hit(rows, "policy.pdf")]).startswith("65534: User nobody [1].")
    option = (
        "--copy-to dir gives a directory where to copy all the scans files.\n\n"
        "--vector-density density sets the density used to convert vector graphics scans to bitmap files.\n\n"
        "Defaults to 300.\n\nVector images (such as PDF, EPS) are converted to bitmap images at this density."
    )
    answer = ExtractiveAnswerer().answer("what density does getimages convert vector scans to bitmaps at?", [_hit(option, "amc.pdf")])
    assert answer.startswith("--vector-density density sets the density"), answer
    assert "Defaults to 300 [1]." in answer, answer  # the value right after the option, not another match


def test_a_short_sentence_without_a_value_does_not_follow_the_best_one():
    text = (
        "The maximum number of answers for a given question is limited to 199. You can not.\n\n"
        "You may force AMC to let one or more answers as last choices with the command lastchoices."
    )
    answer = ExtractiveAnswerer().answer("Is there a limit on how many answers a question can have?", [_hit(text, "amc.pdf")])
    assert answer.startswith("The maximum number of answers") and "You can not" not in answer, answer


def test_a_sentence_introducing_a_list_is_quoted_with_its_first_item():
    text = (
        "Packages that provide a window manager should declare that they provide the virtual package "
        "x-window-manager. They should also register themselves as an alternative for "
        "/usr/bin/x-window-manager, with a priority calculated as follows:\n\n"
        "• Start with a priority of 40.\n\n• If the window manager supports the Debian menu system, add 20 points.\n\n"
        "You can not :\n\n• Turn a simple question into a multiple choices question."
    )
    answer = ExtractiveAnswerer().answer("what priority should an x-window-manager alternative start with?", [_hit(text, "policy.pdf")])
    assert "as follows: Start with a priority of 40 [1]." in answer, answer
    pieces = [s.text for s in ExtractiveAnswerer().sentences([_hit(text, "policy.pdf")])]
    assert not any("You can not : Turn" in p for p in pieces), pieces  # a fragment takes no item


def test_code_a_line_introduces_is_quoted_with_its_introduction_and_cut_short():
    text = (
        "Asymptote code may be sent to the server directly from the command line, specifying any options "
        "directly in the URL:\n\n• SVG output:\n\ncurl --data-binary 'import venn;' "
        "'asymptote.ualberta.ca:10007?f=svg' | display -\n\n"
        "This example emulates how Asymptote produces antialiased\n\ntiff output at one pixel per bp:\n\n"
        "asy -o - venn | convert -alpha Off -density 144x144 -geometry 50%x eps:- venn.tiff"
    )
    answer = ExtractiveAnswerer().answer("which port does the asymptote.ualberta.ca server listen on with curl?",
                                         [_hit(text, "asymptote.pdf")])
    assert answer.startswith("SVG output: curl --data-binary 'import venn;' 'asymptote.ualberta.ca:10007?f=svg'"), answer
    pieces = [s.text for s in ExtractiveAnswerer().sentences([_hit(text, "asymptote.pdf")])]
    assert not any(p.startswith("tiff output") for p in pieces), pieces  # the rest of a broken sentence introduces nothing
    long_code = "Then add the following content to the msmtprc file and save it.\n\n" + "account default host smtp.gmail.com port 587 " * 6
    example = [p for p in (s.text for s in ExtractiveAnswerer().sentences([_hit(long_code, "amc.pdf")])) if "port 587" in p]
    assert example and example[0].endswith(" …") and len(example[0]) < 200, example


def test_a_reference_entrys_default_is_said_as_a_value_not_as_cut_markup():
    # the DocBook XSL reference's synopsis: the value sits after the markup, past where code is cut
    text = (
        "footnote.font.size\n\nfootnote.font.size — The font size for footnotes.\n\n"
        '<xsl:param name="footnote.font.size"> <xsl:value-of select="$body.font.master * 0.8"></xsl:value-of>'
        "<xsl:text>pt</xsl:text> </xsl:param>\n\nThe footnote font size is used for...footnotes!\n\n"
        "paper.type — Select the paper type.\n\n<xsl:param name=\"paper.type\">USletter</xsl:param>\n\n"
        "title.margin.left — Adjust the left margin for titles.\n\n<xsl:param name=\"title.margin.left\"> "
        '<xsl:choose> <xsl:when test="$fop.extensions != 0">-4pc</xsl:when> </xsl:choose> </xsl:param>'
    )
    hit = _hit(text, "docbook-xsl-reference.pdf")
    answer = ExtractiveAnswerer().answer("how big is the footnote font?", [hit])
    assert answer.startswith("footnote.font.size — The font size for footnotes (default: $body.font.master * 0.8 pt)"), answer
    pieces = [s.text for s in ExtractiveAnswerer().sentences([hit])]
    assert "paper.type — Select the paper type (default: USletter)." in pieces, pieces
    # a choice is no single default: quoted as code
    assert any(p.startswith("title.margin.left — Adjust the left margin for titles. <xsl:param") for p in pieces), pieces


def test_a_functions_description_under_its_signature_is_read_with_it():
    # Asymptote's manual: a signature line, then its description in lower case
    text = (
        "The following routines are defined.\n\nreal arclength(path p);\n\nreturns the length (in user "
        "coordinates) of the piecewise linear or cubic curve that path p represents.\n\npath reverse(path p);"
        "\n\nreturns a path running backwards along p."
    )
    assert whole_sentences(text) == [
        "The following routines are defined.",
        "real arclength(path p) returns the length (in user coordinates) of the piecewise linear or cubic "
        "curve that path p represents.",
        "path reverse(path p) returns a path running backwards along p.",
    ]
    # a short label opening a chunk introduces the signature after it
    label = ("rectangular block with rounded corners:\n\nblock roundrectangle(object body, pair center=(0,0), "
             "pen fillpen=invisible, real ds=5);\n\nA block is drawn around its body.")
    answer = ExtractiveAnswerer().answer("what's the function for a block with rounded corners?", [_hit(label, "asymptote.pdf")])
    assert answer.startswith("rectangular block with rounded corners: block roundrectangle("), answer
    # "The routine" ¶ signature ¶ description: one sentence (the description started in lower case alone)
    routine = ("Filling a path is easy. The routine\n\nvoid filloutside(picture pic=currentpicture, path g, pen "
               "p=currentpen);\n\nfills the region exterior to the path g, out to the current boundary of picture pic.")
    assert whole_sentences(routine)[-1] == ("The routine void filloutside(picture pic=currentpicture, path g, pen "
                                            "p=currentpen) fills the region exterior to the path g, out to the current "
                                            "boundary of picture pic.")


def test_a_short_sentence_broken_by_a_gap_is_joined_but_a_title_keeps_apart_from_a_cut_passage():
    # the DocBook XSL reference: line breaks read as gaps inside short sentences
    text = ("ulink.show\n\nThis parameter can be used\n\nto override the gentext string, and would typically be "
            "used on the command line.\n\nNote that\n\nthe term \"manual\" has a special meaning in this context.")
    assert whole_sentences(text) == [
        "This parameter can be used to override the gentext string, and would typically be used on the command line.",
        "Note that the term \"manual\" has a special meaning in this context.",
    ]
    # a passage that starts mid-sentence under its title: the rest of the sentence is not the title's
    cut = ("Fundamental rights in India\n\nthe constitution, which provided that no person shall be deprived of his "
           "property. The right to property is now a legal right.")
    assert whole_sentences(cut) == ["Fundamental rights in India", "The right to property is now a legal right."]
    # nor after a heading in the chunk's middle, nor a list's introduction taken for a term
    assert whole_sentences("Packages must do this.\n\nDebian Policy Manual\n\nthe dependency is satisfied by "
                           "this package in all cases.") == ["Packages must do this.", "Debian Policy Manual"]
    assert whole_sentences("calculated as follows: Start with a priority of 40. Then add ten.") == ["Then add ten."]


def test_a_sentence_introducing_code_is_quoted_with_its_code():
    # LilyPond's manual: "So the command … is:" alone says nothing; a line of music is code, not words
    text = ("This is produced by the Time_signature_engraver which lives in the Staff context. So the command to "
            "make the time signature transparent is:\n\n\\relative { \\time 12/16 \\override "
            "Staff.TimeSignature.transparent = ##t c''4 b8 c d16 c d8 | g,8 a16 b8 c d4 e16 | e8 }\n\nAgain, setting "
            "the transparent property is a rather frequent operation.")
    pieces = [s.text for s in ExtractiveAnswerer().sentences([_hit(text, "lilypond.pdf")])]
    assert not any(p.endswith("transparent is:") for p in pieces), pieces
    assert any(p.startswith("So the command to make the time signature transparent is: \\relative { \\time 12/16 "
                            "\\override Staff.TimeSignature.transparent = ##t") for p in pieces), pieces
