"""Process-level plumbing shared by every layer, in one small place at the bottom of Hark.

- `env.py`: `prepare_process_env()`, the environment torch, tokenizers, unstructured and gradio read
  once when first imported (entry points call it before importing anything heavy);
- `blas.py`: `single_threaded_blas()`, numpy's BLAS on one thread for the small products of a search;
- `heap.py`: `trim_heap()`, the heap's free pages back to the system after loading or a library change;
- `errors.py`: `HarkError(message, hint)`, the failure with a message meant for the person using Hark.

This package imports nothing itself: `env` must stay importable before any heavy library.
"""
