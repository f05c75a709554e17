"""The manuals questions spoken, then answered: does what Whisper hears still get the right answer?

Each English question of `../shared/data/eval/manuals/questions.jsonl` is spoken in the conditions
of `bench.spoken_terms` (Piper and eSpeak NG, two speeds, clean and noisy; the same cached clips and
transcripts, made when missing) and transcribed with a biasing setting; the transcript is then asked
through the same code as `eval answers` (`assistant.answers_eval.ask_one`: a fresh `ask` turn,
offline) on the library of the PDFs. Reported beside the same questions typed: answerable right on
the English manuals and out of scope refused, per condition. Halves as `eval answers` (`--half`).

    python -m bench.spoken_answers --pdfs DIR --cache DIR --half report [--settings none,hotwords:120:0]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench.common import EVAL, jsonl, load_average
from bench.spoken_terms import CONDITIONS, Item, Runner, clip_for, manuals_vocabulary, split_of


def rates(rows: list) -> tuple[float, float, int, int]:
    """Answerable right on the English manuals, out of scope refused, and their counts."""
    ans = [r for r in rows if r.kind == "answerable" and r.doc_language == "en" and not r.file.endswith("-de.pdf")]
    oos = [r for r in rows if r.kind != "answerable"]
    share = lambda xs: sum(r.right for r in xs) / len(xs) if xs else float("nan")  # noqa: E731
    return share(ans), share(oos), len(ans), len(oos)


def main(argv: list[str] | None = None) -> int:
    from assistant.answers_eval import ask_one, build_assistant, in_half
    from assistant.config import load_config
    from models.weights import cache_dir

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdfs", type=Path, required=True, help="the manuals' folder (fetch.sh DIR)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "hark-spoken-terms")
    ap.add_argument("--half", choices=["select", "report", "all"], default="report")
    ap.add_argument("--settings", default="hotwords:120:0", help="bench.spoken_terms settings, comma-separated")
    ap.add_argument("--conditions", type=int, default=len(CONDITIONS))
    ap.add_argument("--model", default="base")
    ap.add_argument("--as-heard", action="store_true", help="transcripts without the library's spellings")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    qs = [q for q in jsonl(EVAL / "manuals" / "questions.jsonl") if q.get("language") == "en" and in_half(str(q["id"]), args.half)]
    vocab = manuals_vocabulary(args.pdfs, args.cache)
    # the transcripts' cache is kept per spoken_terms split (its own hash of the id): one runner each
    runners = {s: Runner(args.model, vocab, args.cache, s) for s in ("select", "report")}
    for r in runners.values():
        r.write = not args.as_heard
    conds = CONDITIONS[: args.conditions]
    synths: dict = {}
    assistant = build_assistant(load_config(None), args.pdfs, cache_dir() / "eval" / "answers")
    print(f"{len(qs)} questions, load {load_average():.1f}")
    typed = [ask_one(assistant, q) for q in qs]
    table = {"typed": rates(typed)}
    heard: dict[str, list[str]] = {}
    flags: dict[str, list[bool]] = {"typed": [r.right for r in typed]}
    for spec in args.settings.split(","):
        for cond in conds:
            texts = []
            for q in qs:
                item = Item(q["id"], q["question"], "manuals")
                texts.append(runners[split_of(q["id"])].hear(spec, clip_for(item, cond, args.cache, synths)))
            rows = [ask_one(assistant, {**q, "question": t}) for q, t in zip(qs, texts, strict=True)]
            table[f"{spec} {cond[0]}"] = rates(rows)
            heard[f"{spec} {cond[0]}"] = texts
            flags[f"{spec} {cond[0]}"] = [r.right for r in rows]
    for r in runners.values():
        r.save()
    print(f"| {args.half} half | answerable right (English manuals) | out of scope refused |")
    print("|---|---:|---:|")
    for name, (right, refused, n_a, n_o) in table.items():
        print(f"| {name} | {right:.3f} of {n_a} | {refused:.3f} of {n_o} |")
    if args.json:
        args.json.write_text(json.dumps({"half": args.half, "ids": [q["id"] for q in qs], "table": table, "heard": heard, "right": flags}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
