"""Hark's command line: argument parsing and wiring only (see README for the commands)."""

from __future__ import annotations

from models.runtime.env import prepare_process_env

# Before anything imports torch, tokenizers or unstructured (see docs/install.md). Not offline: a
# real user has the hub (the configured CLIP weights come from it).
prepare_process_env()

import argparse  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from models.runtime.errors import HarkError  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, help="path to config.yaml")
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS)

    p = argparse.ArgumentParser(prog="launch.py", description="Hark: voice-first answers from your documents.")
    p.add_argument("--config", default=None, help="path to config.yaml (default: ./config.yaml)")
    p.add_argument("-v", "--verbose", action="store_true", default=False, help="debug logging")
    p.add_argument("--share", action="store_true", help="also open a Gradio share link (login required)")
    p.add_argument("--host", default=None, help="address to serve on (default from config)")
    p.add_argument("--port", type=int, default=None, help="port to serve on (default from config)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("ingest", parents=[common], help="index documents")
    s.add_argument("paths", nargs="+", metavar="PATH")
    s.add_argument("--rebuild", action="store_true", help="drop the index and embed everything again")
    s.add_argument("--watch", action="store_true", help="then keep the folders in sync until Ctrl-C")

    s = sub.add_parser("ask", parents=[common], help="one turn, answer to stdout")
    s.add_argument("question")
    s.add_argument("--json", action="store_true", help="print one JSON object")

    s = sub.add_parser("chat", parents=[common], help="terminal chat")
    s.add_argument("--voice", action="store_true", help="push-to-talk from the microphone")

    s = sub.add_parser("transcribe", parents=[common], help="speech to text for one audio file")
    s.add_argument("audio")

    s = sub.add_parser("speak", parents=[common], help="say a text with Hark's voice")
    s.add_argument("text")
    s.add_argument("--out", default=None, metavar="FILE.wav", help="write a WAV file (default: play it)")
    s.add_argument("--language", default=None, help="language of the text, e.g. de (default: the voice's)")

    s = sub.add_parser("eval", parents=[common], help="evaluations")
    ev = s.add_subparsers(dest="what", metavar="WHAT", required=True)
    r = ev.add_parser("retrieval", parents=[common], help="BEIR-layout retrieval evaluation")
    r.add_argument("--dataset", required=True, action="append", help="a BEIR-layout folder (repeat for several)")
    r.add_argument("--half", choices=["all", "select", "report"], default="all",
                   help="queries at even positions (select: defaults are chosen there), odd (report), or all")
    r.add_argument("--methods", default=None, help="comma-separated method names")
    r.add_argument("--json", dest="json_out", default=None, metavar="OUT")
    r.add_argument("--limit", type=int, default=None, help="evaluate only the first N queries")
    g = ev.add_parser("grounding", parents=[common], help="not-known and cited-gold rates of one set pairing")
    g.add_argument("--library", required=True, help="BEIR-layout set whose corpus is the library")
    g.add_argument("--questions", required=True, help="BEIR-layout set whose questions are asked")
    g.add_argument("--json", dest="json_out", default=None, metavar="OUT")
    g.add_argument("--limit", type=int, default=None, help="ask only the first N questions")
    g.add_argument("--half", choices=["all", "fit", "report"], default="all",
                   help="the half of the questions (by id hash) the answerability model was fitted / reported on")
    a = ev.add_parser("answers", parents=[common], help="questions about a folder of documents, end to end")
    a.add_argument("--library", required=True, help="folder of documents (indexed in a cache of its own)")
    a.add_argument("--questions", required=True, help="questions, one JSON object a line (the manuals set's format)")
    a.add_argument("--half", choices=["select", "report", "all"], default="all", help="which half of the questions, by id hash")
    a.add_argument("--limit", type=int, default=None, help="at most this many questions")
    a.add_argument("--llm", default=None, help="an OpenAI-compatible server's URL, tried before the offline answer")
    a.add_argument("--json", dest="json_out", default=None, help="write the summary and the rows here")
    f = ev.add_parser("followups", parents=[common], help="follow-up rewriting against people's rewrites")
    f.add_argument("--file", required=True, help="a followups JSONL file (question, history, rewrite)")
    f.add_argument("--half", choices=["all", "select", "report"], default="all",
                   help="dialogs by a hash of their id: select (defaults are chosen there), report, or all")
    f.add_argument("--json", dest="json_out", default=None, metavar="OUT")
    f.add_argument("--llm", default=None, metavar="URL", help="rewrite through this OpenAI-compatible server")
    i = ev.add_parser("intents", parents=[common], help="intent classifier on a text,label CSV")
    i.add_argument("--file", required=True)
    i.add_argument("--json", dest="json_out", default=None, metavar="OUT")

    sub.add_parser("train-intents", parents=[common], help="regenerate the intent data and retrain the adapter")
    j = sub.add_parser("train-judge", parents=[common], help="retrain the sentence judge of the offline answer")
    j.add_argument("--data", required=True, metavar="DIR",
                   help="a folder holding the BEIR sets of judge.train_sets (with answer strings)")
    j.add_argument("--out", default=None, metavar="DIR", help="where the adapter goes (default: judge.adapter_dir)")
    return p


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for noisy in ("httpx", "httpcore", "urllib3", "numba", "matplotlib", "PIL", "faster_whisper"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _run(args: argparse.Namespace) -> int:
    from assistant.config import load_config

    cfg = load_config(args.config)
    cmd = args.command
    if cmd is None:
        from ui.app import run_app

        return run_app(cfg, share=args.share, host=args.host, port=args.port)
    if cmd == "ingest":
        from ui.cli_ingest import ingest_command

        return ingest_command(
            cfg.embedder, cfg.store, cfg.ingest, cfg.lancedb_uri, [Path(p) for p in args.paths],
            rebuild=args.rebuild, watch=args.watch,
        )  # fmt: skip
    if cmd == "ask":
        from ui.terminal import run_ask

        return run_ask(cfg, args.question, as_json=args.json)
    if cmd == "chat":
        from ui.terminal import run_chat

        return run_chat(cfg, voice=args.voice)
    if cmd == "transcribe":
        from assistant.library_terms import library_terms_for
        from ui.cli_models import transcribe_command

        return transcribe_command(cfg.speech, Path(args.audio), terms=lambda: library_terms_for(cfg))
    if cmd == "speak":
        from ui.cli_speak import speak_command

        return speak_command(cfg.tts, args.text, Path(args.out) if args.out else None, args.language)
    if cmd == "eval" and args.what == "retrieval":
        from ui.cli_eval import eval_retrieval_command

        methods = [m.strip() for m in args.methods.split(",")] if args.methods else None
        work = os.environ.get("HARK_EVAL_DIR")  # index cache; default <cache>/hark/eval
        return eval_retrieval_command(
            cfg.embedder, cfg.store, cfg.ingest, cfg.retrieval, [Path(d) for d in args.dataset], methods,
            args.json_out, limit=args.limit, work_dir=Path(work) if work else None, half=args.half,
        )
    if cmd == "eval" and args.what == "grounding":
        from assistant.grounding_eval import eval_grounding_command

        work = os.environ.get("HARK_EVAL_DIR")  # index cache; default <cache>/hark/eval
        return eval_grounding_command(
            cfg, Path(args.library), Path(args.questions), args.json_out, which=args.half, limit=args.limit,
            work_dir=Path(work) if work else None,
        )
    if cmd == "eval" and args.what == "answers":
        from assistant.answers_eval import eval_answers_command

        work = os.environ.get("HARK_EVAL_DIR")  # library cache; default <cache>/hark/eval/answers
        return eval_answers_command(
            cfg, Path(args.library), Path(args.questions), args.json_out, which=args.half, limit=args.limit,
            llm=args.llm, work_dir=Path(work) / "answers" if work else None,
        )
    if cmd == "eval" and args.what == "followups":
        from assistant.followup_eval import eval_followups_command

        return eval_followups_command(cfg, Path(args.file), args.json_out, half=args.half, llm=args.llm)
    if cmd == "eval" and args.what == "intents":
        from ui.cli_eval import eval_intents_command

        return eval_intents_command(cfg.intent, Path(args.file), args.json_out, base_dir=cfg.base_dir)
    if cmd == "train-intents":
        from ui.cli_models import train_command

        return train_command(cfg.intent, base_dir=cfg.base_dir)
    if cmd == "train-judge":
        from ui.cli_models import train_judge_command

        return train_judge_command(cfg.judge, Path(args.data), cfg.base_dir, Path(args.out) if args.out else None)
    raise AssertionError(cmd)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _setup_logging(args.verbose)
    try:
        return _run(args)
    except HarkError as exc:
        print(f"hark: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, ValueError) as exc:
        print(f"hark: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
