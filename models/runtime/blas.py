"""numpy's BLAS on one thread for the small products of a search (a 50 × 50 Gram matrix, a 10k × d
matrix-vector product).

numpy ships OpenBLAS, whose worker threads busy-wait after every call instead of sleeping (they do
not read OMP_WAIT_POLICY). In a turn that steals a core from the next stage: an in-memory search
through two BLAS threads makes the intent classifier and the query embedding of the same turn
several times slower (one core pinned by `blas_thread_server`). These small products gain nothing
from a second thread.
`models.runtime.env` also sets OPENBLAS_NUM_THREADS=1 for Hark's own processes; this guard covers
every other caller of the library.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager, nullcontext


@functools.lru_cache(maxsize=1)
def _blas_controller():
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().select(user_api="blas")
    except Exception:  # noqa: BLE001 - optional: without it the product just runs as configured
        return None


def single_threaded_blas() -> AbstractContextManager:
    """A context in which numpy's BLAS uses one thread."""
    ctl = _blas_controller()
    return ctl.limit(limits=1) if ctl is not None else nullcontext()
