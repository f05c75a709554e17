"""LLM providers and their fallback chain.

- `base.py`: `Provider` (one small class per endpoint; `stream()` yields text chunks), `Message`,
  `ProviderError`.
- `openai_compat.py`: OpenAI, Groq and OpenAI-compatible local servers; `gemini.py`: Gemini.
- `extractive.py`: the answerer that needs no LLM (the chain's last link).
- `chain.py`: `LLMChain` — failover, timeouts, cool-down, cancellation; `complete()`, `available()`.
"""
