"""Cold starts of the command line: an unchanged re-ingest and one `ask`, each a fresh process.

    python -m bench.cold_start [--files 50] [--rounds 3] [--other /path/to/another/checkout]

A library of `--files` nq_oracle passages as Markdown files is ingested once into a temporary data
folder (the repository's config.yaml with that folder); then each round runs, as fresh processes,
`launch.py ingest LIB` (nothing changed) and `launch.py ask "…" --json`. With `--other`, the same
commands of another checkout (e.g. `git archive main | tar -x -C DIR`) run alternately with this
one's on the same data, so both see the same machine load. Prints wall and CPU (user + system)
seconds, medians over the rounds.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.ingest import write_files

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "who wrote the declaration of independence"


def _config(tree: Path, data: Path) -> Path:
    """The checkout's config.yaml with the data folder moved and its relative model paths kept."""
    text = (tree / "config.yaml").read_text(encoding="utf-8")
    text = re.sub(r"(?m)^(  data_dir:) data\b", rf"\1 {data}", text, count=1)
    text = re.sub(r"(?m)^(  adapter_dir:) (models/\S+)", rf"\1 {tree}/\2", text)
    out = data.parent / f"config-{abs(hash(str(tree)))}.yaml"
    out.write_text(text, encoding="utf-8")
    return out


def _timed(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=cwd, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    return wall, cpu, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--other", default=None, help="another checkout to time alternately with this one")
    args = ap.parse_args()

    trees = [("this", ROOT)] + ([("other", Path(args.other).resolve())] if args.other else [])
    with tempfile.TemporaryDirectory(prefix="hark-cold-") as tmp:
        lib, data = Path(tmp) / "library", Path(tmp) / "data"
        write_files("nq_oracle", lib, args.files)
        configs = {name: _config(tree, data) for name, tree in trees}
        _timed([sys.executable, str(ROOT / "launch.py"), "ingest", str(lib), "--config", str(configs["this"])], ROOT)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.rounds):
            for name, tree in trees:
                launch = [sys.executable, str(tree / "launch.py")]
                cfg = ["--config", str(configs[name])]
                wall, cpu, out = _timed([*launch, "ingest", str(lib), *cfg], tree)
                assert f"{args.files} unchanged" in out, out[-500:]
                times.setdefault((name, "unchanged ingest"), []).append((wall, cpu))
                wall, cpu, _ = _timed([*launch, "ask", QUESTION, "--json", *cfg], tree)
                times.setdefault((name, "ask"), []).append((wall, cpu))
    print(f"| checkout | command | wall s (median of {args.rounds}) | CPU s | all walls |")
    print("|---|---|---:|---:|---|")
    for (name, what), runs in times.items():
        walls = [w for w, _c in runs]
        cpus = [c for _w, c in runs]
        print(
            f"| {name} | {what} | {statistics.median(walls):.2f} | {statistics.median(cpus):.2f} "
            f"| {', '.join(f'{w:.1f}' for w in walls)} |"
        )


if __name__ == "__main__":
    main()
