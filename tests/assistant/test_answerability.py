"""The answerability decision: its features, the fitted model shipped with Hark, unsure transcripts,
and a real turn whose trace records every feature and the decision (real library, no LLM)."""

from __future__ import annotations

import json
import math

import pytest

from assistant.answerability import (
    FEATURES,
    LEXICAL,
    MODEL_FILE,
    Answerability,
    Logistic,
    Signals,
    features,
)
from assistant.events import NOT_KNOWN, Done
from assistant.llm.extractive import ExtractiveAnswerer
from knowledge.types import Hit
from tests.assistant.llm_fixtures import lease_hits
from tests.assistant.turn_fixtures import build_library, make_config, shared_classifier


def _pool(*scores: tuple[str, float, float]) -> list[Hit]:
    return [Hit(cid, f"{cid}.md", cid, f"text of {cid}", d, dense_score=d, bm25_score=b) for cid, d, b in scores]


def test_features_follow_the_scores_and_the_question_words():
    hits = lease_hits()
    ranked = ExtractiveAnswerer().rank("When is the monthly rent due?", hits)
    pool = _pool(("lease-1", 0.71, 9.0), ("lease-3", 0.64, 2.0), ("garden", 0.41, 0.0))
    x = features("When is the monthly rent due?", hits, pool, ranked)
    assert set(x) >= set(FEATURES)
    assert x["dense_top"] == pytest.approx(0.71)
    assert x["dense_gap"] == pytest.approx(0.71 - (0.64 + 0.41) / 2)
    assert x["agree"] == 1.0  # the dense and the full-text search put lease-1 first
    assert x["cover_chunk"] == 1.0 and x["unseen"] == 0.0  # monthly, rent, due: all in lease-1
    assert x["cover_sentence"] == 1.0

    garbage = features("which MACTURT store does the paper use", hits, pool, [])
    assert garbage["unseen"] == 1.0 and garbage["cover_chunk"] == 0.0

    disagree = _pool(("lease-1", 0.71, 1.0), ("lease-3", 0.64, 8.0))
    assert features("rent", hits, disagree, ranked)["agree"] == 0.0


def test_a_question_naming_a_year_or_an_acronym_the_chunks_never_name_is_flagged():
    from assistant.answerability import specific_unseen

    chunks = ["In 2009 the WSE listed 374 companies.", "COVID-19 spread in 2020; Internet2 grew."]
    assert specific_unseen("How many companies did the WSE list in 2009?", chunks) == 0.0
    assert specific_unseen("Which article was published in 1937?", chunks) == 1.0
    assert specific_unseen("Wie viele Firmen listete die WSE 1937?", chunks) == 0.5  # WSE yes, 1937 no
    # hyphens split, number separators and case do not count
    assert specific_unseen("Wie hieß das erste Internet2-Netzwerk?", chunks) == 0.0
    assert specific_unseen("Where did covid-19 start?", chunks) == 0.0
    assert specific_unseen("How many: 1,000 or 1000?", ["about 1000 of them"]) == 0.0
    assert specific_unseen("Where did the virus start?", chunks) == 0.0  # nothing specific asked


def test_a_question_asking_for_a_number_or_a_date_is_flagged_when_the_best_sentences_hold_none():
    hits = lease_hits()
    pool = _pool(("lease-1", 0.71, 9.0))
    ranked = ExtractiveAnswerer().rank("How much is the monthly rent?", hits)
    assert features("How much is the monthly rent?", hits, pool, ranked)["type_missing"] == 0.0
    prose = [type(ranked[0])("The landlord keeps the garden tidy.", 1, 0, 1.0)]
    assert features("How much is the monthly rent?", hits, pool, prose)["type_missing"] == 1.0
    assert features("Wann fanden die ersten Direktwahlen statt?", hits, pool, prose)["type_missing"] == 1.0
    dated = [type(ranked[0])("The first direct elections were held in June 1979.", 1, 0, 1.0)]
    assert features("When were the first direct elections?", hits, pool, dated)["type_missing"] == 0.0
    assert features("Who keeps the garden tidy?", hits, pool, prose)["type_missing"] == 0.0  # no number asked


def test_the_relative_features_do_not_move_with_the_library_s_score_scale():
    """A library whose cosines all sit higher (another language, another embedder) and whose BM25
    scores are larger (another size): `dense_top` moves, the relative features stay."""
    hits = lease_hits()
    scores = [("lease-1", 0.71, 9.0), ("lease-3", 0.64, 2.0), ("garden", 0.41, 0.5), ("tax", 0.38, 1.0),
              ("hall", 0.30, 0.0)]
    x = features("When is the monthly rent due?", hits, _pool(*scores), [])
    shifted = _pool(*[(c, 0.2 + 0.5 * d, b * 4.0) for c, d, b in scores])
    y = features("When is the monthly rent due?", hits, shifted, [])
    assert x["dense_top"] != pytest.approx(y["dense_top"])
    assert x["dense_z"] > 1.0 and x["rank_agree"] == 1.0 and 0 < x["bm25_share"] < 1
    assert y["dense_z"] == pytest.approx(x["dense_z"], rel=0.1)  # the spread's floor (0.01) moves it a little
    for name in ("rank_agree", "cover_idf"):
        assert y[name] == pytest.approx(x[name])
    assert features("rent", hits, _pool(("lease-1", 0.71, 1.0), ("lease-3", 0.64, 8.0)), [])["rank_agree"] == 0.5


def test_the_shipped_model_loads_per_embedder_and_falls_back_to_the_lexical_one():
    raw = json.loads(MODEL_FILE.read_text())
    names = set(raw["models"])
    assert "lexical" in names and len(names) >= 2
    for name in names - {"lexical"}:
        model = Answerability.load(name).model
        assert model is not None and set(model.features) <= set(FEATURES) and 0 < model.threshold < 1
    lexical = Answerability.load("some-other-embedder").model
    assert lexical is not None and lexical.name == "lexical" and lexical.features == LEXICAL
    assert Answerability.load("some-other-embedder").sentence_candidates == 0  # its cosines mean nothing here


def test_the_default_model_reads_the_sentence_cosine_and_the_answerer_measures_it(minilm):
    """The model fitted for the default layout holds every fitted feature, `sentence_sim` among them,
    and says over how many sentences it was measured; the Answerer embeds that many, and the value
    moves the decision (a missing one takes the fitted mean)."""
    from assistant.answer import Answerer
    from assistant.config import LLMSettings, PromptSettings

    decider = Answerability.load(minilm.identity)
    assert decider.model.features == FEATURES and "sentence_sim" in FEATURES
    assert decider.sentence_candidates == decider.model.sentence_candidates >= 1
    answerer = Answerer(LLMSettings(order=[]), PromptSettings(), embed=minilm.embed_documents, answerability=decider)
    assert answerer.extractive.similarity_candidates == decider.sentence_candidates
    assert not answerer.extractive.rank_by_embedding  # measured only: the ranking stays lexical
    hits = lease_hits()
    decision = answerer.assess("When is the monthly rent due?", hits, hits)
    sim = decision.features["sentence_sim"]
    assert 0.3 < sim <= 1.0 and decision.features["sentence_gap"] == pytest.approx(sim - decision.features["dense_top"])
    x = dict(decision.features)
    m = decider.model
    assert m.probability(x | {"sentence_sim": sim + 0.2}) > m.probability(x) > m.probability(x | {"sentence_sim": sim - 0.2})
    mean = m.mean[m.features.index("sentence_sim")]
    assert m.probability(x | {"sentence_sim": math.nan}) == pytest.approx(m.probability(x | {"sentence_sim": mean}))


def test_logistic_round_trips_and_is_monotone_in_a_positive_feature():
    m = Logistic("t", ("a", "b"), (0.0, 1.0), (1.0, 2.0), (2.0, -1.0), 0.5, 0.6)
    again = Logistic.from_json("t", json.loads(json.dumps(m.to_json())))
    assert again == m
    assert m.probability({"a": 1.0, "b": 1.0}) > m.probability({"a": 0.0, "b": 1.0})
    assert m.probability({"a": 0.0, "b": 5.0}) < m.probability({"a": 0.0, "b": 1.0})


def test_the_fitted_threshold_keeps_the_false_not_known_rule_on_every_answerable_pairing():
    """The threshold is the k-th lowest answerable probability (k = 4 % of the pairing), stored with
    4 decimals: rounded up, it passed that probability and made one more false "not known"."""
    import numpy as np

    from bench.fit_answerability import model_for

    rng = np.random.default_rng(1)  # a draw whose 2nd-lowest probability rounded up (0.3835)
    rows = [{"y": 1, "x": {"a": float(v)}} for v in rng.normal(1.0, 1.0, 25)]
    rows += [{"y": 0, "x": {"a": float(v)}} for v in rng.normal(-1.0, 1.0, 25)]
    m = model_for("m", ("a",), rows, [rows[:25]], 0.04)
    assert sum(m.probability(r["x"]) < m.threshold for r in rows[:25]) <= 1  # floor(0.04 · 25)
    assert m.threshold == round(m.threshold, 4)


def test_the_cross_lingual_experiment_never_costs_a_fitted_out_of_scope_pairing():
    """`bench.fit_answerability --cross-lingual`: a second model for English questions on German evidence
    answers such questions the first refuses, at the lowest threshold that refuses every out-of-scope
    question the first refused; when one looks like them, they stay refused."""
    from bench.fit_answerability import gated_model

    skip = {"xquad_en", "xquad_en_noisy", "nq_oracle", "medquad_liveqa", "xquad_de_en"}
    base = Logistic("b", ("a",), (0.0,), (1.0,), (1.0,), 0.0, 0.5)  # p = sigmoid(a)

    def rows(y: int, a: float, n: int, cross: bool) -> list[dict]:
        x = {"a": a, "german": 0.0 if cross else 1.0, "evidence_german": 1.0 if cross else 0.0}
        return [{"y": y, "x": dict(x)} for _ in range(n)]

    def data(lookalike: bool) -> dict[str, list[dict]]:
        return {"xquad_de->xquad_de:fit:9": rows(1, 2.0, 9, False),
                "covid_faq->covid_faq:fit:9": rows(1, -1.0, 9, True),  # refused by the first model
                "xquad_de->covid_faq:fit:9": rows(0, -2.0, 9, False),
                "covid_faq->xquad_de:fit:9": rows(0, -3.0, 8, True) + rows(0, -1.0 if lookalike else -3.0, 1, True)}

    for lookalike in (False, True):
        d = data(lookalike)
        g = gated_model(base, d, 9, skip)
        asked = d["covid_faq->covid_faq:fit:9"]
        assert all(base.probability(r["x"]) < base.threshold for r in asked)
        answered = [g.probability(r["x"]) >= g.threshold for r in asked]
        assert all(answered) != lookalike
        for key in ("xquad_de->covid_faq:fit:9", "covid_faq->xquad_de:fit:9"):
            assert all(g.probability(r["x"]) < g.threshold for r in d[key])


def test_an_unsure_transcript_is_not_answerable_and_typed_input_is_unaffected():
    decider = Answerability(Logistic("t", ("cover_chunk",), (0.5,), (0.1,), (5.0,), 0.0, 0.5))
    hits = lease_hits()
    question = "When is the monthly rent due?"
    ranked = ExtractiveAnswerer().rank(question, hits)
    assert decider.decide(question, hits, hits, ranked).answerable
    for signals in (Signals(avg_logprob=-1.4), Signals(no_speech_prob=0.8)):
        d = decider.decide(question, hits, hits, ranked, signals)
        assert not d.answerable and d.reason == "transcript_unsure"
    sure = decider.decide(question, hits, hits, ranked, Signals(avg_logprob=-0.3, no_speech_prob=0.05))
    assert sure.answerable and sure.features["avg_logprob"] == -0.3
    assert not decider.decide(question, [], [], []).answerable


@pytest.fixture(scope="module")
def library(tmp_path_factory, minilm):
    return build_library(tmp_path_factory, minilm)


def test_a_turn_traces_every_feature_and_the_decision(tmp_path, library):
    from assistant.assistant import Assistant

    cfg = make_config(tmp_path, library, llm__order=[])
    assistant = Assistant(cfg, embedder=library.embedder, store=library.store, classifier=shared_classifier())
    session = assistant.new_session()
    cases = {
        "How much is the pet deposit for a dog?": False,
        "which MACTURT store does the paper use": True,  # a misheard question
        "What dose of ibuprofen is safe for a small child?": True,  # another domain
        "Wer führte die Panthers 2015 bei den Tackles an?": True,  # German, about what the library never mentions
        "How much is the pet depposit for a dgo?": False,  # typed with typos: still answered
    }
    for question, expect_not_known in cases.items():
        done = [e for e in assistant.respond(session, question) if isinstance(e, Done)][-1]
        assert done.answer.not_known is expect_not_known, (question, done.answer.text, done.trace.get("answerability"))
        dec = done.trace["answerability"]
        assert dec["answerable"] is (not expect_not_known) and dec["reason"] == "model"
        assert set(dec["features"]) >= set(FEATURES) and "intent_confidence" in dec["features"]
        if expect_not_known:
            assert done.answer.text == NOT_KNOWN and done.trace["answer"]["grounding"] == "not_answerable"
        else:
            assert "300 euros" in done.answer.text


def test_the_window_max_layout_uses_its_own_fit_else_its_embedders_window_mean_fit(tmp_path):
    raw = json.loads(MODEL_FILE.read_text())
    mean = next(n for n in sorted(raw["models"]) if n != "lexical" and not n.endswith("-wmax"))
    assert Answerability.load(f"{mean}-wmax").model.name == f"{mean}-wmax"  # shipped for the default
    raw["models"].pop(f"{mean}-wmax")
    without = tmp_path / "answerability.json"
    without.write_text(json.dumps(raw), encoding="utf-8")
    assert Answerability.load(f"{mean}-wmax", path=without).model.name == mean
    assert Answerability.load(f"{mean}-trunc", path=without).model.name == "lexical"  # another layout: not fitted


def test_the_library_level_is_the_question_s_99th_percentile_cosine_over_the_whole_library(library):
    """`Retrieval.library_level` (the library's own calibration of `dense_top`) from the real table's
    vectors, and the decision's `library_gap` = best cosine − that level."""
    import numpy as np

    from knowledge.retrieve import Retriever
    from knowledge.settings import RetrievalSettings

    question = "How much is the pet deposit for a dog?"
    retrieval = Retriever(library.embedder, library.store, RetrievalSettings()).retrieve(question)
    vectors = np.stack(library.store.table.to_arrow().column("vector").to_numpy(zero_copy_only=False))
    q = np.asarray(library.embedder.embed_query(question), dtype=np.float64)
    cosines = np.sort(vectors @ (q / np.linalg.norm(q)))
    assert len(cosines) >= 3  # three chunks: the level is the second best
    assert retrieval.library_level == pytest.approx(cosines[int(0.99 * (len(cosines) - 1))], abs=1e-5)
    best = retrieval.best_dense
    assert best is not None and best >= retrieval.library_level
    decision = Answerability.load(library.embedder.identity).decide(
        question, retrieval.hits, retrieval.candidates, [], Signals(library_level=retrieval.library_level)
    )
    assert decision.features["library_gap"] == pytest.approx(best - retrieval.library_level)
    unknown = Answerability.load(library.embedder.identity).decide(question, retrieval.hits, retrieval.candidates, [])
    assert math.isnan(unknown.features["library_gap"]) and "library_gap" not in unknown.to_trace()["features"]
    assert 0 < unknown.probability < 1  # an unknown level counts as the fitted mean


def test_words_match_up_to_a_typo_an_inflection_or_a_compound_part():
    from assistant.llm.extractive import content_words
    from assistant.word_match import covered, in_library

    bag = set(content_words("Beroids use macrocilia as teeth. The coronavirus spreads; die Inkubationszeit."))
    question = content_words("What do Beriods use as teet? Does Corona spread? Die Inkubation? Help? Rend?")
    assert covered(question, bag) == set(content_words("Beriods teet Corona spread Inkubation"))
    vocabulary = tuple(sorted({"lindisfarne", "warschau", "warschauer", "rent", "parent"}))
    assert in_library("warschau", vocabulary) and in_library("warsch", vocabulary)  # an inflection
    assert in_library("lindisafrne", vocabulary)  # a typo
    assert not in_library("macturt", vocabulary) and not in_library("rend", ("parent",))


def test_a_german_question_matches_fewer_typos():
    """German stems sit one edit from unrelated words ("letzt" / "setzt", "best" / "test"): in a German
    question a typo needs 5 letters and the same first letter; a misspelt name still matches."""
    from assistant.word_match import covered, german

    assert german("Wer war der letzte Premierminister von Ostdeutschland?")
    assert german("Warum ist Quaratäne sinnvoll?") and not german("What do Beriods use as teet?")
    assert covered({"letzt", "best"}, {"setzt", "test"}) == {"letzt", "best"}  # the English rule
    assert covered({"letzt", "best"}, {"setzt", "test"}, strict=True) == set()
    assert covered({"quaratän"}, {"quarantän"}, strict=True) == {"quaratän"}

    hit = Hit("faq", "faq.md", "faq", "Der Senat setzt Regeln fest, mehr Tests sind geplant.", 0.5, dense_score=0.5)
    x = features("Was ist der beste Premierminister zuletzt?", [hit], [hit], [])
    assert x["german"] == 1.0 and x["cover_near"] == 0.0  # no "best" ~ "test", "zuletzt" is not "setzt"
    en = features("Which senat sets the best rules?", [hit], [hit], [])
    assert en["german"] == 0.0 and en["cover_near"] > 0.0
    english = Hit("faq2", "faq2.md", "faq", "The senate sets the rules, and more tests are planned.", 0.4, dense_score=0.4)
    assert en["evidence_german"] == 1.0  # an English question on German evidence: what the trace records
    assert features("Which senat sets the best rules?", [english, hit], [english, hit], [])["evidence_german"] == 0.5


def test_the_library_s_vocabulary_flags_what_it_never_mentions(library):
    """`Retrieval.vocabulary` is every word of the real table's titles and texts; `library_unseen`
    is the share of the question's long words that none of them is (up to a typo)."""
    import re

    from knowledge.retrieve import Retriever
    from knowledge.settings import RetrievalSettings

    retriever = Retriever(library.embedder, library.store, RetrievalSettings())
    retrieval = retriever.retrieve("Who led the Panthers in tackles in 2015?")
    table = library.store.table.to_arrow()
    words = {w for col in ("title", "chunk_text") for t in table.column(col).to_pylist() for w in re.findall(r"\w+", t.lower())}
    assert retrieval.vocabulary == tuple(sorted(words))
    model = Answerability.load(library.embedder.identity)
    signals = Signals(library_level=retrieval.library_level, vocabulary=retrieval.vocabulary)
    stranger = model.decide(retrieval.query, retrieval.hits, retrieval.candidates, [], signals)
    assert stranger.features["library_unseen"] == 1.0 and not stranger.answerable  # panthers, tackles
    typo = "How much is the pett deposit for a dogg in the flatt?"
    r = retriever.retrieve(typo)
    own = model.decide(typo, r.hits, r.candidates, [], Signals(library_level=r.library_level, vocabulary=r.vocabulary))
    assert own.features["library_unseen"] == 0.0 and own.features["cover_near"] > own.features["cover_chunk"]
