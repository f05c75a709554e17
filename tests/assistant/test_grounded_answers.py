"""Offline answers end to end (real Ingestor, real LanceDB, MiniLM, retrieval, the answerability
model, the extractive answer): real PDF manuals from Debian's documentation packages and real XQuAD
paragraphs. The right sentence first, whole sentences only, none twice, "not known" for garbage.

The PDFs come with `libtasn1-doc` and `shared-mime-info` (installed by `.ci/install --test`); the
questions and expected answers were checked by hand against the PDFs' text.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from assistant.answer import Answerer
from assistant.answerability import Answerability
from assistant.config import LLMSettings, PromptSettings
from assistant.events import NOT_KNOWN
from assistant.grounding import tidy
from knowledge.retrieve import Retriever
from knowledge.settings import IngestSettings, RetrievalSettings, StoreSettings
from tests.conftest import EVAL_DATA

PDFS = [
    Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
]
# question → strings one of which the answer must hold (checked by hand against the PDFs)
PDF_QUESTIONS = {
    "What is the default weight of a glob pattern?": ["50"],
    "Which MIME type is a mount point a subclass of?": ["inode/directory"],
    "Which command must an application run after installing its MIME XML file?": ["update-mime-database"],
    "What are all text types subclasses of?": ["text/plain"],
    "Which version of the Shared MIME-info Database specification is this?": ["0.21"],
    "What does asn1Parser generate?": ["array"],
    "What does asn1Coding generate?": ["DER encoding"],
    "Under which licence can the libtasn1 library be redistributed?": ["Lesser General Public License"],
    "Which ASN.1 type does this version of libtasn1 not handle?": ["REAL"],
    "What is the header file of libtasn1?": ["libtasn1.h"],
}
GARBAGE = [
    "which MACTURT store does the paper use",  # a misheard voice question
    "blorp fizzle wug tak snee",  # nonsense
    "What dose of ibuprofen is safe for a small child?",  # another domain
    "Who won the football world cup in 1998?",
]


def _library(folder: Path, emb, docs: Path):
    from knowledge.ingest import Ingestor
    from knowledge.store import ChunkStore

    store = ChunkStore.open(str(folder / "lancedb"), emb.identity, emb.dim, StoreSettings(data_dir=str(folder)))
    report = Ingestor(store, emb, IngestSettings(isolation="inline")).ingest([docs])
    assert store.count() > 0, report
    retriever = Retriever(emb, store, RetrievalSettings())
    answerer = Answerer(
        LLMSettings(order=[]),  # no LLM: the extractive answer
        PromptSettings(),
        embed=emb.embed_documents,
        answerability=Answerability.load(emb.identity),
    )
    return retriever, answerer


def _ask(lib, question: str):
    retriever, answerer = lib
    retrieval = retriever.retrieve(question)
    decision = answerer.assess(question, retrieval.hits, retrieval.candidates)
    return answerer.answer(question, retrieval.hits, decision=decision), decision


@pytest.fixture(scope="module")
def pdf_library(tmp_path_factory, minilm):
    missing = [p for p in PDFS if not p.is_file()]
    assert not missing, f"install the Debian documentation packages (.ci/install --test): {missing}"
    docs = tmp_path_factory.mktemp("pdfs")
    for p in PDFS:
        (docs / p.name).write_bytes(p.read_bytes())
    return _library(tmp_path_factory.mktemp("pdf_index"), minilm, docs)


def test_the_manuals_are_indexed_as_words(pdf_library):
    """Their layout breaks words at line ends ("manip- ulation"): the chunks hold whole words."""
    retriever, _ = pdf_library
    text = "\n".join(retriever.store.table.to_arrow().column("chunk_text").to_pylist())
    broken = [m for m in re.findall(r"\b[a-z]{2,}- [a-z]{2,}\b", text) if m.split("- ")[1] not in {"and", "or", "to"}]
    assert broken == [], broken[:10]
    assert "manipulation" in text and "declarations" in text


def _paragraphs(tmp_path_factory, emb, name: str, pick) -> tuple:
    """A library of one BEIR set's paragraphs (`pick(corpus)`: their ids) as text files, the set's
    questions whose judged paragraph is among them, and the paragraphs' texts."""
    root = EVAL_DATA / name
    corpus = {d["_id"]: d for d in map(json.loads, (root / "corpus.jsonl").open())}
    gold: dict[str, str] = {}
    for line in (root / "qrels" / "test.tsv").open().readlines()[1:]:
        q, d, _ = line.split("\t")
        gold.setdefault(q, d)
    ids = pick(corpus)
    docs = tmp_path_factory.mktemp(name)
    for i in ids:
        (docs / f"{i}.txt").write_text(f"{corpus[i]['title']}\n\n{corpus[i]['text']}\n", encoding="utf-8")
    queries = [q for q in map(json.loads, (root / "queries.jsonl").open()) if gold.get(q["_id"]) in ids]
    texts = {i: corpus[i]["text"] for i in ids}
    return _library(tmp_path_factory.mktemp(f"{name}_index"), emb, docs), queries, texts


def _first_articles(corpus: dict) -> list[str]:
    """The first 40 paragraphs of the first ten articles."""
    articles = sorted({i.rsplit("_", 1)[0] for i in corpus})[:10]
    return [i for i in corpus if i.rsplit("_", 1)[0] in articles][:40]


@pytest.fixture(scope="module")
def xquad_library(tmp_path_factory, minilm):
    """40 XQuAD paragraphs (ten articles) as text files, and 60 of their questions."""
    lib, queries, texts = _paragraphs(tmp_path_factory, minilm, "xquad_en", _first_articles)
    return lib, random.Random(5).sample(queries, 60), texts


def _sentences(answer: str) -> list[str]:
    """The quoted sentences of an extractive answer, citations taken out."""
    parts = re.split(r"(?<=\]\.)\s+|(?<=\][!?])\s+", answer.strip())
    return [re.sub(r"\s*\[\d+(, \d+)*\]", "", p).strip() for p in parts if p.strip()]


def _whole_and_distinct(answer: str, sources: list[str]) -> None:
    sents = _sentences(answer)
    assert 1 <= len(sents) <= 3, answer
    assert len({s.lower() for s in sents}) == len(sents), f"a sentence twice: {answer}"
    # ¶ marks a paragraph break; `tidy` is what the answerer does to every answer's spacing
    flat = [tidy(" ".join(re.sub(r"\n\s*\n", " ¶ ", s).split())) for s in sources]
    # a sentence a page or column break cut is quoted joined again (its second part in lower case)
    flat += [re.sub(r" ¶ (?=[\"'“‘(\[]?[a-zà-ÿ])", " ", f) for f in flat]
    # a sentence introducing a list is quoted with the list's first item, its bullet dropped
    flat += [re.sub(r":(?: ¶)? (?:[•◦▪‣∙·●○■□–—*-]|\(?\d{1,2}[.)]) ", ": ", f) for f in flat]
    for s in sents:
        body = s[:-1] if s[-1:] in ".!?" else s
        hits = [src for src in flat if body in src]
        assert hits, f"not a sentence of the evidence: {s!r}"
        src = hits[0]
        before = src[: src.index(body)].rstrip()
        assert not before or before[-1] in ".!?:;)\"”’¶•", f"a fragment: {s!r}"


def test_real_pdf_questions_are_answered_with_the_right_sentence_first(pdf_library):
    wrong = []
    for question, expected in PDF_QUESTIONS.items():
        answer, decision = _ask(pdf_library, question)
        assert decision.answerable, (question, decision.to_trace())
        first = _sentences(answer.text)[0]
        if not any(e.lower() in first.lower() for e in expected):
            wrong.append((question, answer.text))
        _whole_and_distinct(answer.text, [h.chunk_text for h in answer.cited])
    # hand-checked: 10 questions; today 8 open with the right sentence (the spec's version and one more miss)
    assert len(wrong) <= 2, [q for q, _ in wrong]


def test_garbage_and_other_domains_are_not_known(pdf_library):
    for question in GARBAGE:
        answer, decision = _ask(pdf_library, question)
        assert answer.not_known and answer.text == NOT_KNOWN, (question, answer.text, decision.to_trace())
        assert not decision.answerable and decision.reason == "model"
        assert set(decision.features) >= {"dense_top", "bm25_top", "cover_chunk", "unseen"}
        assert answer.trace["grounding"] == "not_answerable"


def test_xquad_answers_hold_the_gold_string_with_whole_distinct_sentences(xquad_library):
    lib, questions, texts = xquad_library
    held = answered = 0
    for q in questions:
        answer, _ = _ask(lib, q["text"])
        if answer.not_known:
            continue
        answered += 1
        held += any(a.lower() in answer.text.lower() for a in q["answers"])
        _whole_and_distinct(answer.text, list(texts.values()))
    assert answered >= 0.95 * len(questions), f"{len(questions) - answered} false not-known"
    assert held >= 0.8 * len(questions), f"gold answer in {held}/{len(questions)}"


# a German ordinal's dot: "am 7. Januar", "des frühen 20. Jahrhunderts" (not a sentence's end)
_ORDINAL_END = re.compile(r"\b(?:am|im|vom|zum|zur|bis|seit|des|dem|der|den|frühen|späten) \d{1,2}\.?$")
_MONTH_OR_CENTURY = "(?:Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember|Jahrhundert)"
_ORDINAL_HEAD = re.compile(r"\d{1,2}\. " + _MONTH_OR_CENTURY)


@pytest.fixture(scope="module")
def german_library(tmp_path_factory, minilm):
    """The 31 German XQuAD paragraphs with a date or a century written as an ordinal, and 40 of their questions."""
    def with_ordinals(corpus: dict) -> list[str]:
        return [i for i, d in corpus.items() if _ORDINAL_HEAD.search(d["text"])]

    lib, queries, texts = _paragraphs(tmp_path_factory, minilm, "xquad_de", with_ordinals)
    return lib, random.Random(7).sample(queries, 40), texts


def test_german_answers_quote_whole_sentences_across_dates_and_centuries(german_library):
    lib, questions, texts = german_library
    assert len(texts) >= 20
    flat = [tidy(" ".join(t.split())) for t in texts.values()]
    answered = 0
    for q in questions:
        answer, _ = _ask(lib, q["text"])
        if answer.not_known:
            continue
        answered += 1
        _whole_and_distinct(answer.text, list(texts.values()))
        for s in _sentences(answer.text):
            assert not _ORDINAL_END.search(s), f"cut at an ordinal: {s!r}"
            assert not re.match(_MONTH_OR_CENTURY, s), f"the rest of a sentence cut at an ordinal: {s!r}"
            body = s.rstrip(".!?")
            source = next(t for t in flat if body in t)
            assert not _ORDINAL_END.search(source[: source.index(body)].rstrip()), f"the rest of a sentence: {s!r}"
    assert answered >= 0.75 * len(questions), f"{len(questions) - answered} false not-known"  # the check has answers


# NQ questions whose answer (the person's name) is in the sentence next to the one that repeats the
# question's words: the passage opens "Tessa Peake-Jones (born 9 May 1957) is an English actress."
NQ_NEIGHBOURS = {
    "p131": ("who played mark on the show the rifleman", "John Ernest Crawford"),
    "p198": ("who played raquel in only fools and horses", "Tessa Peake-Jones"),
    "p383": ("who played the judge in good will hunting", "James P. Flynn"),
    "p470": ("who played the mom on what's eating gilbert grape", "Darlene Cates"),
    "p280": ("who sang i'm gonna run away from you", "Tami Lynn"),
}


@pytest.fixture(scope="module")
def nq_library(tmp_path_factory, minilm):
    """The five passages of `NQ_NEIGHBOURS` among 10 other NQ passages, as text files."""
    corpus = {d["_id"]: d for d in map(json.loads, (EVAL_DATA / "nq_oracle" / "corpus.jsonl").open())}
    ids = list(NQ_NEIGHBOURS) + [i for i in list(corpus)[:40] if i not in NQ_NEIGHBOURS][:10]
    docs = tmp_path_factory.mktemp("nq")
    for i in ids:
        (docs / f"{i}.txt").write_text(f"{corpus[i]['title']}\n\n{corpus[i]['text']}\n", encoding="utf-8")
    return _library(tmp_path_factory.mktemp("nq_index"), minilm, docs), {i: corpus[i]["text"] for i in ids}


def test_the_answer_takes_the_sentence_next_to_the_one_repeating_the_question(nq_library):
    lib, texts = nq_library
    for doc, (question, name) in NQ_NEIGHBOURS.items():
        answer, decision = _ask(lib, question)
        assert decision.answerable, (question, decision.to_trace())
        assert name.lower() in answer.text.lower(), (question, answer.text)
        assert answer.cited and answer.cited[0].source_path.endswith(f"{doc}.txt"), (question, answer.cited)
        _whole_and_distinct(answer.text, [texts[doc]])


def test_a_question_whether_something_exists_that_the_library_never_names_is_not_known(pdf_library):
    from assistant.answerability import Signals

    retriever, answerer = pdf_library

    def decide(question: str):
        r = retriever.retrieve(question)
        return answerer.assess(question, r.hits, r.candidates, Signals(vocabulary=r.vocabulary))

    near = decide("Is there an Android app for the shared MIME-info database?")
    assert not near.answerable and near.features["absent_asked"] >= 1, near.to_trace()
    held = decide("Is there a default weight for glob patterns?")  # every word of it is the spec's
    assert held.answerable and held.features["absent_asked"] == 0, held.to_trace()
