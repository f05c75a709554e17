"""Hark's benchmarks: one script per question, run from the repository root as a module,
`python -m bench.NAME [--help]`. Each prints a table with the machine's load beside its timings.

Importing the package sets Hark's process defaults before a script imports anything else (OMP
passive threads, one BLAS thread, no telemetry, never the model hub: nothing is downloaded);
torch, tokenizers and numpy read them once, when first imported. `bench.common` holds the shared
helpers.
"""

from models.runtime.env import prepare_process_env

prepare_process_env(offline=True)
