"""A smaller copy of a BEIR-layout dev set for a CPU that cannot embed all of it in time.

    python -m bench.subset medquad_liveqa --docs 2000 --out /tmp/hark-eval/sets

Keeps every query and every judged passage (all files in `qrels/`, any grade: the judged
non-relevant ones are the hard negatives of the original pool) and fills up to `--docs` with a
seeded random sample of the other passages. Fewer distractors make every method score higher than on
the whole set, so only methods compared on the same subset mean anything. Writes
`<out>/<set>_sub<docs>/` (corpus.jsonl, queries.jsonl, qrels/).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from pathlib import Path

from bench.common import EVAL, jsonl


def make_subset(src: Path, out: Path, docs: int, seed: int = 13) -> Path:
    judged: set[str] = set()
    for tsv in (src / "qrels").glob("*.tsv"):
        for line in tsv.read_text(encoding="utf-8").splitlines()[1:]:
            if line.strip():
                judged.add(line.split("\t")[1])
    corpus = jsonl(src / "corpus.jsonl")
    others = [r for r in corpus if str(r["_id"]) not in judged]
    fill = random.Random(seed).sample(others, max(0, min(len(others), docs - len(judged))))
    keep = {str(r["_id"]) for r in fill} | judged
    target = out / f"{src.name}_sub{docs}"
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    rows = [r for r in corpus if str(r["_id"]) in keep]  # the original order
    (target / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    shutil.copy(src / "queries.jsonl", target / "queries.jsonl")
    for tsv in (src / "qrels").glob("*.tsv"):
        shutil.copy(tsv, target / "qrels" / tsv.name)
    print(f"{target}: {len(rows)} of {len(corpus)} passages ({len(judged & keep)} judged), all queries")
    return target


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset")
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", default="/tmp/hark-eval/sets")
    args = ap.parse_args()
    make_subset(EVAL / args.dataset, Path(args.out), args.docs, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
