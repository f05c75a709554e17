"""Hark's benchmarks: one script per question, run from the repository root as a module,
`python -m bench.NAME [--help]`. Each prints a table with the machine's load beside its timings.

- `e2e`: how long from the end of a spoken or typed question to the first answer token, per stage,
  and how much memory does Hark hold (10k-chunk library, loopback LLM)?
- `turn`: what does each stage of a turn cost on a small library, and how often is the extractive
  answer right?
- `ui`: how long does the app take to start, and a typed turn through its HTTP API?
- `load`: how do turn times hold up with many concurrent sessions, and do sessions stay apart?
- `llm_chain`: how much time does Hark add between a provider's first token and the caller's?
- `embed`: which runtime embeds queries and passages fastest (ONNX Runtime vs PyTorch)?
- `intent`: how fast is the intent classifier per query?
- `stt`: how accurate and fast is speech to text with Hark's settings vs faster-whisper's defaults?
- `tts`: how fast is speech synthesis, and how soon is a sentence's audio ready?
- `ingest`: how fast is ingestion, and what does an unchanged re-run cost?
- `search`: which vector index (exact, IVF) at 10k and 100k chunks, and its recall?
- `retrieval`: how fast is the diffusion rerank vs NetworkX, and a whole retrieval at 10k/100k?
- `rerank_sweep`: which diffusion settings rank best on the dev sets (select/held-out halves)?
- `long_text`: does embedding a long chunk whole (window mean) retrieve as well as truncation?
- `extractive_quality`: how often does the extractive answer contain the gold answer span?

Importing the package sets Hark's process defaults before a script imports anything else (OMP
passive threads, one BLAS thread, no telemetry, never the model hub: nothing is downloaded);
torch, tokenizers and numpy read them once, when first imported. `bench.common` holds the shared
helpers; `bench.wer` the word error rate (also used by the speech tests).
"""

from models.runtime.env import prepare_process_env

prepare_process_env(offline=True)
