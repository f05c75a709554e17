"""The vectors of the last encoder windows an embedder encoded, by their token ids.

A typed turn embeds the question twice: as the search query, then beside the answer's candidate
sentences for the answerability decision's cosine. With a model that puts no prefix before either
(all-MiniLM-L6-v2), the two windows are the same token ids, so the second is read from here
instead of run through the encoder again (~1/3 of that batch). A model with query and passage
prefixes never shares a window between the two, and is encoded as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

RECENT_WINDOWS = 256  # windows kept: a turn's question and its few candidate sentences, a few sessions over


class RecentWindows:
    """A small thread-safe least-recently-used map: window token ids → unit vector (a copy)."""

    def __init__(self, size: int = RECENT_WINDOWS) -> None:
        self.size = size
        self._items: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, window: list[int]) -> np.ndarray | None:
        key = tuple(window)
        with self._lock:
            vec = self._items.get(key)
            if vec is not None:
                self._items.move_to_end(key)
            return vec

    def put(self, window: list[int], vec: np.ndarray) -> None:
        if self.size <= 0:
            return
        key = tuple(window)
        with self._lock:
            self._items[key] = np.array(vec, copy=True)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
