"""Cosines of an embedder the answerability model was not fitted for, put in the fitted one's units.

How high cosines run is the embedder's own: all-MiniLM-L6-v2 puts a question 0.5–0.7 from the
passage that answers it and near 0 from an unrelated one; multilingual-e5 puts both between 0.7
and 1 (as its model card says). The model's cosine features (`dense_top`, `sentence_sim`, `library_gap`, …) only mean
something in the units it was fitted in. `ANCHORS` are fixed question–passage pairs; the mean cosine
of the matching pairs and of the mismatched ones (each question with the other passages) are two
points on either scale, and the straight line through them maps the new embedder's cosines onto the
fitted one's (`Calibration.apply`). The fitted embedder's two points are stored with its model
(`assistant/answerability.json`, `reference`), so the fitted embedder need not be loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

# written for this purpose: a question and a passage that answers it, in the kinds of documents a
# person keeps (manuals, letters, contracts, health leaflets, regulations, notes), English and German
ANCHORS: tuple[tuple[str, str], ...] = (
    ("How long is the warranty on the dishwasher?",
     "The manufacturer guarantees the dishwasher against defects in parts and labour for two years from purchase."),
    ("What is the deposit for the flat?", "The tenant pays a security deposit of three months' rent before moving in."),
    ("When does the library close on Saturdays?", "On Saturdays the reading room opens at nine and closes at one."),
    ("How often should I take the antibiotic?", "Take one tablet every eight hours with water until the pack is finished."),
    ("Who signed the contract for the company?", "The agreement was signed on behalf of the company by its managing director."),
    ("What causes the error light to blink red?", "A blinking red light means the paper tray is empty or the paper is jammed."),
    ("Where was the conference held last year?", "Last year's meeting took place in Lisbon, at the university's congress centre."),
    ("How do I reset the router to factory settings?",
     "Hold the reset button on the back for ten seconds until the lights flash to restore the defaults."),
    ("What are the symptoms of iron deficiency?", "Lack of iron often shows as tiredness, pale skin and shortness of breath."),
    ("Which river flows through the old town?", "The old town lies on both banks of the river, joined by a stone bridge."),
    ("How many credits does the master's programme require?", "Students must earn 120 credit points to complete the master's degree."),
    ("What is the boiling point of water at sea level?", "At normal atmospheric pressure, water boils at 100 degrees Celsius."),
    ("Why was the flight cancelled?", "The airline cancelled the flight because of a strike by air traffic controllers."),
    ("How much does the annual membership cost?", "Membership of the club costs 60 euros a year, payable in January."),
    ("What does the function return when the file is missing?",
     "If the file does not exist, the function returns an empty list instead of raising an error."),
    ("Who invented the telephone?", "Alexander Graham Bell was granted the first patent for the telephone in 1876."),
    ("How do I cancel my insurance policy?", "The policy can be cancelled in writing with one month's notice before renewal."),
    ("When was the castle built?", "Construction of the castle began in the twelfth century under the count of the region."),
    ("What should I bring to the appointment?", "Please bring your insurance card and a list of the medicines you take."),
    ("How fast can the train travel?", "The new trains reach a top speed of 300 kilometres per hour."),
    ("Wie lange dauert die Probezeit?", "Die Probezeit beträgt sechs Monate, in dieser Zeit kann mit zwei Wochen Frist gekündigt werden."),
    ("Wann muss die Abschlussarbeit abgegeben werden?", "Die Masterarbeit ist spätestens sechs Monate nach der Anmeldung beim Prüfungsamt einzureichen."),
    ("Wie hoch ist die Miete für die Wohnung?", "Die monatliche Kaltmiete beträgt 850 Euro zuzüglich Nebenkosten."),
    ("Welche Nebenwirkungen hat das Medikament?", "Häufige Nebenwirkungen sind Kopfschmerzen, Übelkeit und Schwindel."),
    ("Wo befindet sich der Sicherungskasten?", "Der Sicherungskasten ist im Keller neben der Waschmaschine angebracht."),
    ("Wer ist für die Reparatur zuständig?", "Kleinere Reparaturen bis 100 Euro trägt der Mieter, größere der Vermieter."),
    ("Wie viele Einwohner hat die Stadt?", "Die Stadt zählt heute rund 250.000 Einwohner."),
    ("Was passiert bei einem Fehlversuch in der Prüfung?", "Eine nicht bestandene Prüfung kann zweimal wiederholt werden."),
    ("Wann wurde die Brücke eröffnet?", "Die Brücke wurde nach vierjähriger Bauzeit im Jahr 1932 für den Verkehr freigegeben."),
    ("Wie reinige ich den Filter der Kaffeemaschine?", "Den Filter einmal im Monat herausnehmen und unter warmem Wasser ausspülen."),
)


@dataclass(frozen=True)
class Points:
    """An embedder's mean cosine of matching and of mismatched `ANCHORS` pairs."""

    matched: float
    mismatched: float


def anchor_points(
    embed_queries: Callable[[Sequence[str]], np.ndarray], embed_documents: Callable[[Sequence[str]], np.ndarray]
) -> Points:
    """Both points for one embedder (its query and passage encoders, so prefixes apply); one batch each."""
    q = _unit(embed_queries([a for a, _ in ANCHORS]))
    p = _unit(embed_documents([b for _, b in ANCHORS]))
    sims = q @ p.T
    n = len(ANCHORS)
    off = ~np.eye(n, dtype=bool)
    return Points(float(np.mean(np.diag(sims))), float(np.mean(sims[off])))


def anchor_points_of(embedder: Any) -> Callable[[], Points]:
    """`anchor_points` of an `Embedder`, computed when called (only an embedder without a fitted model is asked)."""
    return lambda: anchor_points(embedder.embed_queries, embedder.embed_documents)


def _unit(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


# cosine features (a cosine: mapped as one) and differences of cosines (scaled only)
COSINES = ("dense_top", "sentence_sim")
DIFFERENCES = ("dense_gap", "library_gap", "sentence_gap")
# MiniLM's matching pairs are 0.53 closer than its mismatched ones, mpnet's 0.55, an e5-like 0.3 × that
# 0.16; CLIP's text tower with random weights 0.04
MIN_SPAN = 0.05


@dataclass(frozen=True)
class Calibration:
    """reference cosine ≈ offset + scale · this embedder's cosine."""

    offset: float = 0.0
    scale: float = 1.0

    @classmethod
    def between(cls, own: Points, reference: Points) -> Calibration:
        """The line through the two points. ValueError when this embedder hardly tells the pairs apart
        (random weights, a broken model: a line through two near points says nothing)."""
        span = own.matched - own.mismatched
        if span < MIN_SPAN:
            raise ValueError(f"matching pairs are {span:.3f} closer than mismatched ones (< {MIN_SPAN})")
        scale = (reference.matched - reference.mismatched) / span
        return cls(reference.matched - scale * own.matched, scale)

    def apply(self, x: dict[str, float]) -> dict[str, float]:
        """The features with their cosines in the reference units (the others unchanged)."""
        out = dict(x)
        for f in COSINES:
            if f in out:
                out[f] = self.offset + self.scale * out[f]
        for f in DIFFERENCES:
            if f in out:
                out[f] = self.scale * out[f]
        return out


class Model(Protocol):
    name: str
    features: tuple[str, ...]
    threshold: float
    sentence_candidates: int

    def probability(self, x: dict[str, float]) -> float: ...


@dataclass(frozen=True)
class Calibrated:
    """A model fitted for another embedder, reading this embedder's features through a `Calibration`."""

    model: Model
    calibration: Calibration

    @property
    def name(self) -> str:
        c = self.calibration
        return f"{self.model.name} (calibrated: {c.offset:+.3f} + {c.scale:.3f}·cosine)"

    @property
    def features(self) -> tuple[str, ...]:
        return self.model.features

    @property
    def threshold(self) -> float:
        return self.model.threshold

    @property
    def sentence_candidates(self) -> int:
        return self.model.sentence_candidates

    def probability(self, x: dict[str, float]) -> float:
        return self.model.probability(self.calibration.apply(x))
