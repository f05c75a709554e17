"""DocBook reference pages set as one running paragraph (dblatex's build of the DocBook XSL
reference): read back as headings, a name line, a synopsis and a description. The PDFs are written
here with a real text layer whose lines run the headings into the text the way that manual's do."""

from __future__ import annotations

from assistant.llm.sentence_filters import code_examples
from knowledge import refentry
from knowledge.chunking import chunk_document
from knowledge.loaders import LoadedDocument
from knowledge.pdf_reader import SECTION_SEP, read_pdf
from knowledge.sentences import whole_sentences
from tests.knowledge.docs_factory import write_text_pdf

PAGE_1 = [
    "name of the S5 slides JavaScript file. XHTML: Slidy ParamsXHTML: Slidy ParamsXHTML: Slidy ParamsTable",
    "of Contentsslidy.durationslidy.path.prefixslidy.user.cssNameslidy.duration — Specifies the duration of",
    'the presentation Synopsis <xsl:param name="slidy.duration">0</xsl:param> Description This parameter',
    "specifies the duration of the presentation in minutes. A JavaScript clock will count down to help the",
    "speaker. Nameslidy.path.prefix — Specifies the path to Slidy files Synopsis <xsl:param -",
]
PAGE_2 = [
    'name="slidy.path.prefix">files/slidy/</xsl:param> Description This parameter specifies the path where',
    "Slidy CSS and JavaScript files reside. Nameslidy.user.css — Specifies the name of the Slidy user CSS",
    'file Synopsis<xsl:param name="slidy.user.css">styles/w3c-blue.css</xsl:param> Description This',
    "parameter specifies the name of the Slidy user CSS file. NoteThe file is looked for in the output",
    "directory. The entry chapter toc indicates that a Table of Contents should be generated.",
]


def test_glued_reference_pages_read_as_headings_name_line_synopsis_and_description(tmp_path):
    doc = read_pdf(write_text_pdf(tmp_path / "ref.pdf", [PAGE_1, PAGE_2]))
    texts = [b.text for b in doc.blocks]
    assert not any(m in t for t in texts for m in ("Nameslidy", "Synopsis", "Description", "ParamsTable", "Contentsslidy"))
    assert "XHTML: Slidy Params" in [b.text for b in doc.blocks if b.kind == "title"]
    name = next(b for b in doc.blocks if b.text.startswith("slidy.duration —"))
    assert name.text == "slidy.duration — Specifies the duration of the presentation."
    assert name.section.split(SECTION_SEP)[-2:] == ["XHTML: Slidy Params", "slidy.duration"]
    assert texts[texts.index(name.text) + 1] == '<xsl:param name="slidy.duration">0</xsl:param>'
    assert texts[texts.index(name.text) + 2].startswith("This parameter specifies the duration")
    # the synopsis broken across a page: dblatex's " -" line-break mark goes, the page is where it starts
    prefix = next(b for b in doc.blocks if b.text.startswith('<xsl:param name="slidy.path.prefix"'))
    assert prefix.text == '<xsl:param name="slidy.path.prefix">files/slidy/</xsl:param>' and prefix.page == 1
    css = next(b for b in doc.blocks if b.text.startswith("This parameter specifies the name of the Slidy"))
    assert css.page == 2 and css.section.endswith(f"{SECTION_SEP}slidy.user.css")
    assert "Note: The file is looked for" in css.text
    assert "a Table of Contents should be generated" in css.text  # the words in prose stay


def test_a_chunks_sentences_keep_the_name_line_and_offer_the_synopsis_as_its_example(tmp_path):
    read = read_pdf(write_text_pdf(tmp_path / "ref.pdf", [PAGE_1, PAGE_2]))
    chunks = chunk_document(LoadedDocument(read.title, read.blocks), "ref.pdf", "h", 250, 50)
    text = "\n\n".join(c.chunk_text for c in chunks)
    sentences = whole_sentences(text)
    assert "slidy.user.css — Specifies the name of the Slidy user CSS file." in sentences
    assert not any("Specifies" in s and "Params" in s for s in sentences)  # no heading run into it
    examples = code_examples(text)
    assert any(e.startswith("slidy.path.prefix — Specifies the path") and "files/slidy/" in e for e in examples)


# an entry's head broken by a wide gap (an empty line: a new paragraph), and the next entry's index
# terms run together before its name, after a footnote's URL
GAPPED = [
    PAGE_2[0],
    "Slidy CSS and JavaScript files reside. Nameslidy.footer — Specifies the footer of the slides",
    "",
    'Synopsis<xsl:param name="slidy.footer">x</xsl:param> Description This parameter sets the',
    "footer text. List numbering22 http://www.example.org/ref.html#Num slidy.bannerslidy.bannertext",
    'Nameslidy.banner — Sets the banner Synopsis <xsl:param name="slidy.banner"/> Description This',
    "parameter sets the banner.",
]


def test_an_entry_head_broken_by_a_gap_is_still_one_entry(tmp_path):
    doc = read_pdf(write_text_pdf(tmp_path / "ref.pdf", [PAGE_1, GAPPED]))
    titles = [b.text for b in doc.blocks if b.kind == "title"]
    assert titles[-2:] == ["slidy.footer", "slidy.banner"]
    texts = [b.text for b in doc.blocks]
    assert not any(m in t for t in texts for m in ("Nameslidy", "Synopsis", "Description", "bannerslidy"))
    assert "slidy.footer — Specifies the footer of the slides." in texts
    footer = next(b for b in doc.blocks if b.text.startswith("This parameter sets the footer"))
    assert footer.section.endswith(f"{SECTION_SEP}slidy.footer") and footer.text.endswith("numbering (http://www.example.org/ref.html#Num).")


def test_text_without_the_marks_is_one_piece():
    prose = "When a Table of Contents is produced, the entry Name — Value is used. Synopsis and Description follow."
    assert not refentry.marked(prose) or [p.role for p in refentry.split(prose)] == ["text"]
    assert refentry.split(prose)[0].text == prose


def test_a_contents_list_run_together_is_no_text(tmp_path):
    run = "Generationannotate.tocautotoc.label.separatorautotoc.label.in.hyperlinkprocess.source.tocprocess.empty"
    page = ["ToC Generation", run, "", "The annotate.toc parameter says whether the TOC is annotated."]
    doc = read_pdf(write_text_pdf(tmp_path / "toc.pdf", [page]))
    texts = [b.text for b in doc.blocks]
    assert not any("autotoc.label.separatorautotoc" in t for t in texts), texts
    assert "The annotate.toc parameter says whether the TOC is annotated." in " ".join(texts)
    assert not refentry.contents_run("See https://example.org/" + "a" * 90 + " for the list.")  # a URL is no list


def test_a_processing_instructions_parameters_and_related_links_are_pieces_of_their_own(tmp_path):
    """A PI's page ends with "Parameters", "Related Global Parameters" and "Related Information"
    glued into its description; an answer quoted them as one sentence with the description."""
    lines = [
        "Namedbhtml_dir — Specifies a directory name in which to write files Synopsis <?dbhtml",
        'dir="path"?> Description When chunking output, use the <?dbhtml dir?> PI as a child of a chunk',
        'source element to create a subdirectory for the chunk. Parameters dir="path"Specifies the pathname',
        "for the directory Related Global Parameters base.dir Related Information in DocBook XSL: The",
        "Complete Guide (http://www.sagehill.net/docbookxsl/) dbhtml dir processing instruction",
        "(http://www.sagehill.net/docbookxsl/Chunking.html#dbhtmlDirPI)",
    ]
    doc = read_pdf(write_text_pdf(tmp_path / "pi.pdf", [lines]))
    texts = [b.text for b in doc.blocks if b.kind == "text"]
    description = next(t for t in texts if t.startswith("When chunking output"))
    assert description.endswith("create a subdirectory for the chunk."), description
    assert 'dir="path": Specifies the pathname for the directory.' in texts, texts
    params = next(b for b in doc.blocks if b.text.startswith('dir="path"'))
    assert params.section.split(SECTION_SEP)[-1] == "Parameters", params.section
    assert any(t.startswith("Related Global Parameters base.dir") for t in texts), texts
    assert any(t.startswith("Related Information in DocBook XSL") for t in texts), texts  # its words still find the page


def test_an_entry_whose_name_ends_one_paragraph_and_its_dash_opens_the_next_is_split(tmp_path):
    """The DocBook XSL reference breaks 132 entries after their name: "…Nameadmon.graphics.extension"
    ¶ "— Filename extension … Synopsis<xsl:param …> Description Sets …" was read as a sentence."""
    lines = [
        "Sets the path to admonition graphics. admon.graphics.extensionadmon.graphics.extensionNameadmon.graphics.extension",
        "",
        '— Filename extension for admonition graphics Synopsis<xsl:param name="admon.graphics.extension">.png',
        "</xsl:param> Description Sets the filename extension to use on admonition graphics.",
    ]
    doc = read_pdf(write_text_pdf(tmp_path / "entry.pdf", [lines]))
    texts = [b.text for b in doc.blocks]
    assert "admon.graphics.extension — Filename extension for admonition graphics." in texts, texts
    assert any(t.startswith("Sets the filename extension to use") for t in texts), texts
    assert not any(t.startswith("—") for t in texts), texts
    # the dash still on the name's line: "… Namekeep.relative.image.uris —" ¶ "Should image URIs …"
    dashed = ["Be sure to include a trailing slash. Namekeep.relative.image.uris —", "",
              'Should image URIs be resolved against xml:base? Synopsis<xsl:param name="keep.relative.image.uris"',
              'select="1"></xsl:param> Description If non-zero, relative URIs are kept.']
    texts = [b.text for b in read_pdf(write_text_pdf(tmp_path / "dashed.pdf", [dashed])).blocks]
    assert "keep.relative.image.uris — Should image URIs be resolved against xml:base?" in texts, texts
