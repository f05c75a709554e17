"""The followups table with an LLM in the chain: a real HTTP server on 127.0.0.1 (tests.llm_server)
whose every reply is one fixed rewrite, foreign to every conversation. Checked (as Hark runs), each
such rewrite is refused and the heuristic's is used, so the table equals the offline one; unchecked,
it shows what the check prevents.

    python -m bench.followups_llm --file ../shared/data/eval/followups/followups.jsonl --half report
"""

from __future__ import annotations

import argparse
import logging

from assistant.config import load_config
from assistant.followup_eval import eval_followups_command
from tests.llm_server import LLMServer, Reply

FIXED = "What is the weather forecast for Paris tomorrow?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", required=True)
    ap.add_argument("--half", default="report", choices=["all", "select", "report"])
    ap.add_argument("--reply", default=FIXED, help="the fixed rewrite the server sends")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    cfg = load_config()
    cfg.llm.first_token_timeout = 5
    with LLMServer(default=Reply(args.reply), max_lifetime=3600) as server:
        for check in (True, False):
            eval_followups_command(cfg, args.file, None, half=args.half, llm=server.openai_url, check=check)
            print(f"  server requests so far: {len(server.requests)}\n")


if __name__ == "__main__":
    main()
