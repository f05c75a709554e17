"""Run a loader once, from whichever thread asks first; the others wait for it."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Once:
    """`run(load)` calls `load` the first time only; a failed load is tried again next time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.done = False

    def run(self, load: Callable[[], None]) -> None:
        if self.done:
            return
        with self._lock:
            if not self.done:
                load()
                self.done = True
