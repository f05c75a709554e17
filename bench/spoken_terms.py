"""Spoken questions with the library's terms: what Whisper hears with and without the library's vocabulary.

The manuals questions (`../shared/data/eval/manuals/questions.jsonl`, the English ones) and some
passage sets' queries (nq_oracle, xquad_en: speech about other things) are spoken by Piper (the
bundled en_US-joe-medium voice) and by eSpeak NG, each at two speeds, clean and with pink noise
(sox, ~10 dB SNR), and transcribed by Hark's recogniser (`Transcriber.transcribe`, the whole-clip
path of `launch.py transcribe`) with each biasing setting. The vocabulary is built from the six PDFs
(`--pdfs`, read and cut into chunks as an ingest does) by `knowledge.vocabulary`.

- **term recall**: of the library terms in a question (its words that are terms of the library's
  vocabulary), the share the transcript writes (letters and digits in the same order, case and
  punctuation aside: "AMC TXT" is "AMC-TXT", "lily pond" is not "LilyPond");
- **WER** (bench/wer.py) per group;
- **inserted terms**: vocabulary terms in the transcript of out-of-scope speech (the manuals'
  out-of-scope and nonsense questions, the passage queries) and of the LibriVox clips that the
  reference does not hold (spaces aside: "auto multiple choice" holds "automultiplechoice"; strict
  too), per 100 reference words, and the utterances with one (`--json`: which terms, in what was heard);
- **LibriVox WER**: the five pocketsphinx-testdata clips (the same unrelated vocabulary).

Questions are split by a hash of their id: choose settings on `--split select`, report on `report`.
Audio and transcripts are cached in `--cache` (default: the system's temp folder), never in the tree.

    python -m bench.spoken_terms --split select --settings none,hotwords:120:0,prompt:120:0 --conditions 2
    python -m bench.spoken_terms --split report --settings none,hotwords:120:0,stream:hotwords:120:0 --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.common import EVAL, jsonl, load_average
from bench.wer import wer
from knowledge.vocabulary import Vocabulary, build_vocabulary
from models.settings import BiasSettings, SpeechSettings
from models.speech import SpeechInputError, Transcriber
from tests.audio_data import librivox_clips

# (name, engine, speed, noisy): two voices, two speeds, clean and noisy; --conditions N takes the first N
CONDITIONS = [
    ("piper-1.0-clean", "piper", 1.0, False),
    ("espeak-160-noise", "espeak", 160, True),
    ("piper-0.8-noise", "piper", 0.8, True),
    ("espeak-200-clean", "espeak", 200, False),
]
SNR_DB = 10.0
HINTS = "@sound7"  # the way words heard are matched to terms (models/speech_bias.py): part of the cache key
_TOKENS = re.compile(r"[^\W_]+", re.UNICODE)
_WORD = re.compile(r"(?<![\w\\])(\\?[^\W\d_][\w]*(?:[-._][^\W_][\w]*)*)", re.UNICODE)


@dataclass(frozen=True)
class Item:
    id: str
    text: str
    group: str  # manuals | out_of_scope | passages


def tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKENS.findall(text)]


def contains(hay: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def spelled_in(hay: list[str], term: str) -> bool:
    """The term's letters and digits are those of a run of consecutive words ("lily pond", "PS to edit")."""
    key = "".join(tokens(term))
    return any("".join(hay[i : i + n]) == key for n in range(1, 5) for i in range(len(hay) - n + 1))


def question_terms(text: str, keys: dict[str, str]) -> list[str]:
    """The library terms a text holds (its words that are the vocabulary's terms)."""
    found = []
    for m in _WORD.finditer(text):
        term = keys.get(m.group(1).lower())
        if term is not None and term not in found:
            found.append(term)
    return found


def split_of(item_id: str) -> str:
    return "select" if int(hashlib.sha1(item_id.encode()).hexdigest(), 16) % 2 == 0 else "report"


def load_items(passages: int) -> list[Item]:
    items = []
    for q in jsonl(EVAL / "manuals" / "questions.jsonl"):
        if q.get("language") != "en":
            continue  # the recogniser is set to English (speech.language)
        items.append(Item(q["id"], q["question"], "manuals" if q["kind"] == "answerable" else "out_of_scope"))
    for name in ("nq_oracle", "xquad_en"):
        rows = jsonl(EVAL / name / "queries.jsonl")
        rows.sort(key=lambda r: hashlib.sha1(r["_id"].encode()).hexdigest())
        items += [Item(f"{name}:{r['_id']}", r["text"], "passages") for r in rows[:passages]]
    return items


def manuals_vocabulary(pdfs: Path, cache: Path) -> Vocabulary:
    """The vocabulary an ingest of `pdfs` writes: the reader's chunks with the default settings."""
    from knowledge.chunking import chunk_document
    from knowledge.loaders import LoadedDocument
    from knowledge.pdf_reader import read_pdf
    from knowledge.pdf_text import VERSION as READER
    from knowledge.settings import IngestSettings
    from knowledge.vocabulary import VERSION

    path = cache / f"manuals.vocabulary.r{READER}v{VERSION}.json"
    if path.is_file():
        return Vocabulary.from_json(path.read_text(encoding="utf-8"))
    rows, ingest = [], IngestSettings()
    for pdf in sorted(pdfs.glob("*.pdf")):
        doc = read_pdf(pdf)
        for c in chunk_document(LoadedDocument(doc.title, doc.blocks), str(pdf), "", ingest.chunk_words, ingest.overlap_words):
            rows.append((c.title, c.section, c.chunk_text))
    vocab = build_vocabulary(rows)
    path.write_text(vocab.to_json(), encoding="utf-8")
    return vocab


# ---- speech ---------------------------------------------------------------------------------------
def spoken(text: str) -> str:
    """What a person says for the written question: a LaTeX-style backslash is not read out."""
    return text.replace("\\", "")


def _write(path: Path, rate: int, samples: np.ndarray) -> None:
    import soundfile as sf

    sf.write(str(path), samples, rate, subtype="PCM_16")


def _noise(path: Path, cache: Path, rate: int) -> None:
    """Add pink noise (made by sox) at SNR_DB."""
    import soundfile as sf

    x, _ = sf.read(str(path), dtype="float32")
    noise_file = cache / f"pink-{rate}.wav"
    if not noise_file.is_file():
        subprocess.run(["sox", "-n", "-r", str(rate), "-c", "1", "-b", "16", str(noise_file), "synth", "30",
                        "pinknoise", "vol", "0.5"], check=True)  # fmt: skip
    n, _ = sf.read(str(noise_file), dtype="float32")
    n = np.resize(n, len(x))
    gain = np.sqrt(np.mean(x**2) / max(np.mean(n**2), 1e-12) / 10 ** (SNR_DB / 10))
    _write(path, rate, np.clip(x + gain * n, -1, 1))


def clip_for(item: Item, cond: tuple, cache: Path, synths: dict) -> Path:
    name, engine, speed, noisy = cond
    folder = cache / "audio" / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha1(item.text.encode()).hexdigest()[:16]}.wav"
    if path.is_file():
        return path
    text = spoken(item.text)
    if engine == "piper":
        if speed not in synths:
            from models.settings import TTSSettings
            from models.tts import Synthesiser

            synths[speed] = Synthesiser(TTSSettings(engine="piper", piper_length_scale=speed))
        rate, samples = synths[speed].synthesise(text)
        _write(path, rate, np.concatenate([np.zeros(rate // 5, np.int16), samples, np.zeros(rate // 5, np.int16)]))
    else:
        from tests.audio_data import espeak_wav

        made = espeak_wav(folder, text, name=path.stem + ".tmp", speed=int(speed), voice="en-us")
        os.replace(made, path)
        (folder / f"{path.stem}.tmp.raw.wav").unlink(missing_ok=True)
    if noisy:
        import soundfile as sf

        _noise(path, cache, sf.info(str(path)).samplerate)
    return path


# ---- settings and runs ----------------------------------------------------------------------------
def parse_setting(spec: str) -> BiasSettings:
    """none | [stream:]MODE:TOKENS:TERMS[:RATIO|:nohint]. stream: one pass as the voice loop makes it
    (`Transcriber.decode`, the +6 s window), the unbiased transcript as the earlier pass's words;
    else the whole clip (`transcribe`). MODE hotwords, prompt or both; TOKENS the budget;
    TERMS the library's best terms given to every pass (0: only the terms like words heard, by a
    second pass); RATIO the match a word heard needs (0-100; "80/70": 70 for a word no word list
    has); nohint: no second pass."""
    if spec == "none":
        return BiasSettings(mode="off")
    parts = spec.split(":")
    extra = parts[3] if len(parts) > 3 else ""
    hint = extra != "nohint"
    ratio_text, _, odd_text = extra.partition("/")  # "80/70": 70 for words no word list has
    ratio = float(ratio_text) if ratio_text.replace(".", "").isdigit() else BiasSettings().hint_min_ratio
    odd = float(odd_text) if odd_text.replace(".", "").isdigit() else BiasSettings().hint_nonword_ratio
    return BiasSettings(mode=parts[0], max_tokens=int(parts[1]), max_terms=int(parts[2]), second_pass=hint,
                        hint_terms=6 if hint else 0, hint_min_ratio=ratio, hint_nonword_ratio=odd)  # fmt: skip


class Runner:
    def __init__(self, model: str, vocab: Vocabulary, cache: Path, split: str) -> None:
        self.tr = Transcriber(SpeechSettings(model=model))
        self.tr.warm_up()
        self.terms = tuple(vocab.texts())
        self.vocab_key = hashlib.sha1("\n".join(self.terms).encode()).hexdigest()[:10]
        self.model = model
        self.cache_path = cache / f"transcripts-{split}.json"  # one per split: runs of both may go at once
        self.cache = json.loads(self.cache_path.read_text()) if self.cache_path.is_file() else {}
        self.unsaved = 0
        self.passes: list[int | None] = []  # per transcript: 2 when heard again with terms like its words
        self.write = True  # False: the transcripts as heard, the terms not written the library's way

    def hear(self, spec: str, path: Path) -> str:
        biased = f"{self.vocab_key}|{spec}{HINTS}" if spec != "none" else "-|none"
        key = f"{self.model}|{biased}|{path.parent.name}/{path.name}"
        if key not in self.cache:
            stream = spec.startswith("stream:")
            hint = self.hear("none", path) if stream else None  # before the settings change
            if stream:
                self.passes.pop()  # the hint's transcript is not one of this setting's
            self.tr.settings = self.tr.settings.model_copy(update={"bias": parse_setting(spec.removeprefix("stream:"))})
            self.tr.vocabulary = (lambda: self.terms) if spec != "none" else None
            try:
                first = self.cache.get(f"{self.model}|-|none|{path.parent.name}/{path.name}")
                quick = not stream and first is not None and self.tr.settings.bias.max_terms == 0
                if quick:  # no terms in the first pass: it is the unbiased one (cached), only the second runs
                    text = first if isinstance(first, str) else first[0]
                    again = self.tr.hear_again(self.tr.prepare(path).samples, text) if text else None
                    self.cache[key] = [again[2], 2] if again is not None else [text, 1]
                elif stream:  # a streaming pass: the cut window, an earlier pass's words as the hint
                    samples = self.tr.prepare(path).samples
                    self.cache[key] = [self.tr.decode(samples, margin_s=6.0, hint=hint).text, 1]
                else:
                    res = self.tr.transcribe(path)
                    self.cache[key] = [res.text, res.passes]
            except SpeechInputError:
                self.cache[key] = ["", 1]
            self.unsaved += 1
            if self.unsaved >= 20:
                self.save()
        got = self.cache[key]
        text, passes = (got, None) if isinstance(got, str) else got
        self.passes.append(passes)
        if spec != "none" and self.write:  # the terms written the library's way, as `transcribe` does (cached ones too)
            self.tr.settings = self.tr.settings.model_copy(update={"bias": parse_setting(spec.removeprefix("stream:"))})
            self.tr.vocabulary = lambda: self.terms
            text = self.tr.written(text)
        return text

    def save(self) -> None:
        tmp = self.cache_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.cache))
        os.replace(tmp, self.cache_path)
        self.unsaved = 0


def inserted(hyp: str, ref: str, term_tokens: list[list[str]], strict: bool = False) -> int:
    """Terms the transcript writes that the speech does not hold. A term spoken in other words'
    spacing ("auto multiple choice" → "automultiplechoice", "doc book" → "DocBook") is held,
    unless `strict`."""
    h, r = tokens(hyp), tokens(ref)
    return sum(1 for t in term_tokens if contains(h, t) and not contains(r, t)
               and (strict or not spelled_in(r, "".join(t))))  # fmt: skip


def evaluate(spec: str, items: list[Item], conds: list[tuple], runner: Runner, cache: Path, synths: dict,
             keys: dict[str, str]) -> dict:  # fmt: skip
    term_tokens = [tokens(t) for t in runner.terms]
    runner.passes = []
    refs: dict[str, list[str]] = {}
    hyps: dict[str, list[str]] = {}
    hit = loose = total = ins = ins_strict = ins_words = ins_utts = utts = 0
    per_cond: dict[str, list[int]] = {}
    missed: list[dict] = []  # the terms not heard, with what was
    added: list[dict] = []  # the terms heard in speech that does not hold them
    for item in items:
        for cond in conds:
            hyp = runner.hear(spec, clip_for(item, cond, cache, synths))
            ref = spoken(item.text)
            refs.setdefault(item.group, []).append(ref)
            hyps.setdefault(item.group, []).append(hyp)
            if item.group == "manuals":
                for term in question_terms(item.text, keys):
                    ok = contains(tokens(hyp), tokens(term))
                    hit, total, loose = hit + ok, total + 1, loose + spelled_in(tokens(hyp), term)
                    pc = per_cond.setdefault(cond[0], [0, 0])
                    pc[0], pc[1] = pc[0] + ok, pc[1] + 1
                    if not ok:
                        missed.append({"term": term, "condition": cond[0], "heard": hyp})
            else:
                n = inserted(hyp, ref, term_tokens)
                ins, ins_utts, utts = ins + n, ins_utts + (n > 0), utts + 1
                if n:
                    added.append({"terms": [t for t, tt in zip(runner.terms, term_tokens, strict=True)
                                            if inserted(hyp, ref, [tt])], "condition": cond[0], "said": item.text,
                                  "heard": hyp})  # fmt: skip
                ins_strict += inserted(hyp, ref, term_tokens, strict=True)
                ins_words += len(tokens(ref))
    libri = librivox_clips()
    lhyps = [runner.hear(spec, c.path) for c in libri]
    lins = sum(inserted(h, c.reference, term_tokens) for h, c in zip(lhyps, libri, strict=True))
    runner.save()
    return {
        "setting": spec,
        "term_recall": hit / max(total, 1),
        "terms": total,
        "term_recall_spelled": loose / max(total, 1),  # spaces aside: "lily pond" counts
        "term_recall_by_condition": {k: v[0] / max(v[1], 1) for k, v in per_cond.items()},
        "wer": {g: wer(refs[g], hyps[g]) for g in refs},
        "inserted_per_100_words": 100 * ins / max(ins_words, 1),
        "inserted": ins,
        "inserted_strict_per_100_words": 100 * ins_strict / max(ins_words, 1),  # spacing counts too
        "utterances_with_insertion": f"{ins_utts}/{utts}",
        "librivox_wer": wer([c.reference for c in libri], lhyps),
        "librivox_inserted": lins,
        "second_passes": sum(p == 2 for p in runner.passes if p is not None) / max(1, len(runner.passes)),
        "missed": missed,
        "inserted_terms": added,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["select", "report", "all"], default="select")
    ap.add_argument("--settings", default="none,hotwords:120")
    ap.add_argument("--conditions", type=int, default=len(CONDITIONS), help="the first N of the four")
    ap.add_argument("--passages", type=int, default=20, help="queries of each passage set")
    ap.add_argument("--model", default="base")
    ap.add_argument("--pdfs", type=Path, default=Path("/work/pdfs"))
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "hark-spoken-terms")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    vocab = manuals_vocabulary(args.pdfs, args.cache)
    keys = {t.text.lower(): t.text for t in vocab.terms}
    items = [i for i in load_items(args.passages) if args.split == "all" or split_of(i.id) == args.split]
    conds = CONDITIONS[: args.conditions]
    runner = Runner(args.model, vocab, args.cache, args.split)
    synths: dict = {}
    print(f"{len(items)} texts × {len(conds)} conditions, {len(vocab.terms)} terms, load {load_average():.1f}")
    results = []
    for spec in args.settings.split(","):
        t0 = time.perf_counter()
        r = evaluate(spec, items, conds, runner, args.cache, synths, keys)
        r["seconds"] = round(time.perf_counter() - t0, 1)
        results.append(r)
        w = r["wer"]
        print(f"{spec:22s} recall {r['term_recall']:.3f} (spelled {r['term_recall_spelled']:.3f}, {r['terms']} terms)  WER manuals "
              f"{100 * w.get('manuals', 0):.1f} oos {100 * w.get('out_of_scope', 0):.1f} passages "
              f"{100 * w.get('passages', 0):.1f}  inserted {r['inserted_per_100_words']:.2f}/100 words "
              f"(strict {r['inserted_strict_per_100_words']:.2f}) "
              f"({r['utterances_with_insertion']} utts)  LibriVox {100 * r['librivox_wer']:.2f} "
              f"(+{r['librivox_inserted']})  2nd pass {100 * r['second_passes']:.0f} %  {r['seconds']} s", flush=True)  # fmt: skip
        print("   by condition: " + ", ".join(f"{k} {v:.3f}" for k, v in r["term_recall_by_condition"].items()))
    if args.json:
        args.json.write_text(json.dumps({"split": args.split, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
