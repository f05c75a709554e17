"""The encoder's window cut to the clip (`speech.streaming.window_margin_s`) against Whisper's full
30-second window: word error rate and time of one pass, clip by clip on one model object.

Clips: the LibriVox clips of pocketsphinx-testdata (human speech; as recorded, with 0.3 s of quiet
each side, and with 1 s before and 0.3 s after), and questions of the dev sets
(`../shared/data/eval`: xquad_en, nq_oracle, covid_faq; read there, never copied) spoken by Piper's
voice and by eSpeak NG, each also with a low-passed hiss mixed in (~15 dB SNR) and 0.3 s of quiet
each side, as a push-to-talk clip has. A cut pass refused for the full one counts in the cut row
(its time too).

    python -m bench.window [--questions 20] [--margins 0.5,1,2] [--model base] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from models.runtime.env import prepare_process_env  # noqa: E402

prepare_process_env(offline=True)

import numpy as np  # noqa: E402

from bench.common import EVAL  # noqa: E402
from bench.wer import wer  # noqa: E402
from models import audio as audio_io  # noqa: E402
from models.settings import SpeechSettings, TTSSettings  # noqa: E402
from models.speech import Transcriber  # noqa: E402
from tests.audio_data import espeak_wav, librivox_clips  # noqa: E402

SETS = ("xquad_en", "nq_oracle", "covid_faq")


def questions(per_set: int) -> list[str]:
    out = []
    for name in SETS:
        with (EVAL / name / "queries.jsonl").open() as f:
            rows = [json.loads(line)["text"] for line in f]
        out += [q for q in rows if 4 <= len(q.split()) <= 18 and _english(q)][:per_set]
    return out


_ENGLISH = frozenset("the is are what how can do does i my a of to when who which where why".split())


def _english(question: str) -> bool:
    """covid_faq mixes five languages: an English question (ASCII, with an English function word)."""
    return question.isascii() and bool(_ENGLISH & set(question.lower().split()))


def _pad_and_noise(src: Path, dst: Path, noisy: bool) -> np.ndarray:
    cmd = ["sox", str(src), "-r", "16000", "-c", "1", "-b", "16", str(dst), "pad", "0.3", "0.3"]
    subprocess.run(cmd, check=True)
    clean = audio_io.load(dst).samples
    if not noisy:
        return clean
    rng = np.random.default_rng(len(clean))
    white = rng.standard_normal(len(clean) + 64)
    hiss = np.convolve(white, np.ones(64) / 8.0, mode="valid")[: len(clean)]  # low-passed
    rms = float(np.sqrt(np.mean(clean**2))) or 1e-3
    hiss *= rms / (float(np.sqrt(np.mean(hiss**2))) * 10 ** (15 / 20))
    return np.clip(clean + hiss.astype(np.float32), -1, 1).astype(np.float32)


def clips(per_set: int, folder: Path) -> list[tuple[str, np.ndarray, str]]:
    from models.tts import Synthesiser

    out = []
    for i, c in enumerate(librivox_clips()):
        speech = audio_io.load(c.path).samples
        # as recorded, with the 0.3 s of quiet each side the other clips have, and with the 1 s
        # before the speech that a hands-free utterance keeps: one fragile word ("ill-disposed")
        # flips with the padding on every window, so each margin is judged on all three
        for name, lead, trail in (("librivox", 0.0, 0.0), ("librivox+0.3", 0.3, 0.3), ("librivox+1.0", 1.0, 0.3)):
            quiet = [np.zeros(int(audio_io.TARGET_RATE * sec), np.float32) for sec in (lead, trail)]
            out.append((f"{name}-{i}", np.concatenate([quiet[0], speech, quiet[1]]), c.reference))
    piper = Synthesiser(TTSSettings(engine="piper"))
    for i, q in enumerate(questions(per_set)):
        spoken = piper.render(q)
        raw = folder / f"p{i}.raw.wav"
        with wave.open(str(raw), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(spoken.sample_rate)
            w.writeframes(np.asarray(spoken.samples, dtype=np.int16).tobytes())
        e = espeak_wav(folder, q, name=f"e{i}")
        for voice, path in (("piper", raw), ("espeak", e)):
            for noisy in (False, True):
                name = f"{voice}{'+noise' if noisy else ''}"
                out.append((name, _pad_and_noise(path, folder / f"{voice}{i}{noisy}.wav", noisy), q))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=20, help="questions of each dev set")
    ap.add_argument("--margins", default="0.5,1,2", help="window margins (s) to compare with the full window")
    ap.add_argument("--model", default="base")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    margins: list[float | None] = [None] + [float(m) for m in args.margins.split(",")]
    tr = Transcriber(SpeechSettings(model=args.model, warm_up=False))
    tr.warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        data = clips(args.questions, Path(tmp))
    hyps: dict[str, dict[float | None, list[str]]] = {}
    times: dict[float | None, list[float]] = {m: [] for m in margins}
    refs: dict[str, list[str]] = {}
    for kind, samples, ref in data:
        group = kind.split("-")[0]
        refs.setdefault(group, []).append(ref)
        for m in margins:  # side by side, clip by clip
            t0 = time.perf_counter()
            text = tr.decode(samples, margin_s=m).text
            times[m].append(time.perf_counter() - t0)
            hyps.setdefault(group, {}).setdefault(m, []).append(text)
    label = {m: "full 30 s" if m is None else f"clip + {m:g} s" for m in margins}
    print(f"{len(data)} clips, whisper {args.model}; WER % by clip kind, then one pass's time (p50 / mean ms)")
    print(f"{'window':12}" + "".join(f"{g:>14}" for g in refs) + f"{'all':>8}{'p50 ms':>9}{'mean ms':>9}")
    summary: dict = {}
    for m in margins:
        per = {g: 100 * wer(refs[g], hyps[g][m]) for g in refs}
        every = 100 * wer([r for g in refs for r in refs[g]], [h for g in refs for h in hyps[g][m]])
        p50, mean = 1000 * statistics.median(times[m]), 1000 * statistics.fmean(times[m])
        summary[label[m]] = {"wer": {**per, "all": every}, "p50_ms": p50, "mean_ms": mean}
        print(f"{label[m]:12}" + "".join(f"{per[g]:14.2f}" for g in refs) + f"{every:8.2f}{p50:9.0f}{mean:9.0f}")
    widest = margins[-1]  # the clips whose words the last margin changed
    changed = [
        (g, refs[g][i], hyps[g][None][i], hyps[g][widest][i])
        for g in refs
        for i in range(len(refs[g]))
        if hyps[g][widest][i] != hyps[g][None][i]
    ]
    for g, ref, full, cut in changed[:15]:
        print(f"  {g}: «{ref}»\n    full «{full}»\n    cut  «{cut}»")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
