"""Hark's own voice taken out of the microphone: a reference echo canceller for the voice loop.

The page plays an answer's sentences back to back, and the server knows every sample of them: it
served them (`ui/voice_routes.py`). What reaches the microphone from the speakers is that signal,
delayed (the audio path, the room), attenuated and coloured. `EchoCanceller` finds where in the
answer the microphone is (normalised cross-correlation of the last `window_s` of microphone audio
against the whole answer, coarse at 4 kHz, then to the sample at 16 kHz), fits a short FIR filter
(`taps`, least squares over the same window) from the answer to the microphone, and subtracts its
output from each new chunk. What is left of the echo (still speech to a VAD, ~20 dB down) is
turned down further where it is well below the echo taken out (`gate_db`); what is left then is
the user's voice and the room, so the VAD, barge-in and the transcript hear the user, not Hark.

It only subtracts what it can explain: when the subtraction would raise a chunk's energy, or the
echo return loss enhancement (ERLE) of the fit falls under `min_erle_db` (the answer paused, a gap
between sentences, a glitch of the audio path, the user talking over it), the position is searched
again in the latest chunk. A chunk that matches nothing of the answer is passed on as it is (the
user's voice dominates it); one that matches closely (≥ 0.6) but that no fit explains yet is
turned down 40 dB until the fit catches up (the fit only uses audio since the position was found).
The browser's own echo canceller (`echoCancellation: true`, ui/assets.py) runs first; this is the
second line, for what it leaves or when it is not there.

All at 16 kHz mono float32. One canceller per browser tab; not thread-safe (the tab's chunks come
one at a time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RATE = 16000
DECIMATE = 4
GATE_BLOCK = 256  # 16 ms
MIN_SEARCH = 1600  # 100 ms: a microphone opened while Hark speaks is searched from its first chunk
BLOCK = 1600  # 100 ms: a longer chunk is cancelled in blocks of this size
HOLD_DOWN = 0.01  # −40 dB: a chunk that matches the answer but that no fit explains yet
HOLD_SCORE = 0.6  # … this closely (normalised correlation): the user's voice over it would lower it


@dataclass(frozen=True)
class EchoStats:
    """What the canceller did so far (the bench prints it)."""

    locked: bool
    lag_ms: float | None  # microphone behind the answer by this much (since the answer began)
    erle_db: float | None  # of the latest window
    searches: int
    cancelled_s: float  # microphone audio that had the echo subtracted
    held_down_s: float = 0.0  # microphone audio that matched the answer but no fit explained (turned down)


class EchoCanceller:
    def __init__(
        self, taps: int = 24, window_s: float = 0.6, min_corr: float = 0.4, min_erle_db: float = 3.0, gate_db: float = 10.0
    ):
        self.taps = taps
        self.gate_db = gate_db
        self.window = int(window_s * RATE)
        self.min_corr = min_corr
        self.min_erle_db = min_erle_db
        self._turn = -1
        self._parts: dict[int, np.ndarray] = {}
        self._ref = np.zeros(0, np.float32)
        self._history = np.zeros(0, np.float32)  # the latest microphone samples (raw)
        self._pos = 0  # microphone samples seen (the history ends here)
        self._lag: int | None = None  # microphone index − answer index of the same sound
        self._h: np.ndarray | None = None
        self._erle: float | None = None
        self._searches = 0
        self._cancelled = 0
        self._suppressed = 0
        self._found_at = 0
        self._score = 0.0
        self._fitted = False  # the latest block had the echo subtracted by a fit

    # ---- what is played -------------------------------------------------------------------------
    def reference(self, turn: int, index: int, samples: np.ndarray) -> None:
        """Sentence `index` of answer `turn` (16 kHz float32): the page plays them in order."""
        if turn != self._turn:
            if turn < self._turn:
                return
            self._turn, self._parts, self._lag, self._h = turn, {}, None, None
        if index in self._parts:
            return
        self._parts[index] = np.asarray(samples, np.float32).reshape(-1)
        ordered = [self._parts[i] for i in sorted(self._parts)]
        self._ref = np.concatenate(ordered) if ordered else np.zeros(0, np.float32)

    @property
    def has_reference(self) -> bool:
        return len(self._ref) > 0

    def stats(self) -> EchoStats:
        lag = None if self._lag is None else self._lag * 1000 / RATE
        return EchoStats(
            self._lag is not None, lag, self._erle, self._searches, self._cancelled / RATE, self._suppressed / RATE
        )

    # ---- the microphone -------------------------------------------------------------------------
    def process(self, x: np.ndarray, active: bool) -> np.ndarray:
        """The chunk with Hark's echo subtracted (`active`: an answer is playing or just was;
        otherwise the chunk as it is)."""
        x = np.asarray(x, np.float32).reshape(-1)
        if active and self.has_reference and len(x) > BLOCK:
            # a busy page posts 0.2–0.5 s at once: a jump of the audio path inside such a chunk fits
            # neither position, and the whole chunk would pass as it is (long enough for a barge-in);
            # block by block, only the block with the jump is in doubt
            return np.concatenate([self.process(x[a : a + BLOCK], True) for a in range(0, len(x), BLOCK)])
        keep = self.window + self.taps + RATE // 2
        self._history = np.concatenate([self._history, x])[-keep:]
        self._pos += len(x)
        if not active or not self.has_reference or not len(x):
            return x
        fitted, self._fitted = self._fitted, False
        if self._lag is None and not self._search():
            return x  # nothing in it matches the answer: not Hark
        y = self._cancel(x)
        if y is None:
            # the playback moved (a pause, a gap between sentences, a glitch of the audio path), or the
            # user speaks over it
            self._lag = self._h = None
            if not self._search(max(MIN_SEARCH, len(x))):  # found again in the latest audio only
                return x
            y = self._cancel(x)
            if y is None:
                if self._score < HOLD_SCORE and not fitted:
                    return x  # the user's voice may be most of it: let it through
                # it matches the answer closely, or (a jump of the path inside this block: neither
                # position fits all of it) the block before was Hark's voice explained by a fit, but
                # no fit explains it yet: held down until the fit catches up. The user's voice over
                # the answer matches it less: at most this one block of it is held down
                return self._hold_down(x)
        self._cancelled += len(x)
        self._fitted = True
        return y

    def _hold_down(self, x: np.ndarray) -> np.ndarray:
        self._suppressed += len(x)
        return (x * HOLD_DOWN).astype(np.float32)

    def _window(self, size: int | None = None) -> tuple[np.ndarray, int]:
        """The latest window of microphone audio and its first sample's index."""
        m = self._history[-(size or self.window) :]
        return m, self._pos - len(m)

    def _search(self, size: int | None = None) -> bool:
        """Where in the answer the latest window is; True when found (sets the lag)."""
        m, start = self._window(size)
        if len(m) < MIN_SEARCH or float(np.dot(m, m)) < 1e-7 * len(m):
            return False
        self._searches += 1
        pad = np.zeros(len(m), np.float32)
        ref = np.concatenate([pad, self._ref, pad])  # the window may begin before or end after the answer
        md, rd = _decimate(m), _decimate(ref)
        n = 1 << int(np.ceil(np.log2(len(rd) + len(md))))
        corr = np.fft.irfft(np.fft.rfft(rd, n) * np.conj(np.fft.rfft(md, n)), n)[: len(rd) - len(md) + 1]
        energy = np.concatenate([[0.0], np.cumsum(rd.astype(np.float64) ** 2)])
        seg = energy[len(md) :] - energy[: len(energy) - len(md)]
        score = corr / (np.sqrt(np.maximum(seg, 1e-12)) * (np.linalg.norm(md) + 1e-12))
        score[seg < 1e-6 * len(md)] = 0.0  # windows of silence in the answer
        j = int(np.argmax(score))
        if score[j] < self.min_corr:
            return False
        coarse = j * DECIMATE - len(pad)  # answer index of the window's first sample
        best, at = -np.inf, coarse
        for k in range(coarse - DECIMATE * 2, coarse + DECIMATE * 2 + 1):  # to the sample
            r = _slice(self._ref, k, len(m))
            c = float(np.dot(r, m))
            if c > best:
                best, at = c, k
        self._lag = start - at
        self._h = None
        self._found_at = self._pos  # later fits use only the audio from here on
        self._score = float(score[j])
        return True

    def _design(self, index: int, length: int) -> np.ndarray:
        """Columns: the answer around the aligned position, one per tap."""
        half = self.taps // 2
        return np.stack([_slice(self._ref, index + half - t, length) for t in range(self.taps)], axis=1)

    def _cancel(self, x: np.ndarray) -> np.ndarray | None:
        """x minus its echo, or None when the echo path no longer fits."""
        assert self._lag is not None
        # fitted on the audio since the position was found, so a fit never spans two positions
        m, start = self._window(max(MIN_SEARCH, len(x), min(self.window, self._pos - self._found_at)))
        a = self._design(start - self._lag, len(m))
        if float(np.abs(a[-len(x) :]).sum()) == 0.0:
            # the answer is silent where this chunk should hear it (its end, a gap between sentences),
            # or the position is wrong (a false match at the search, a path that moved): searched
            # again, so a wrong position does not let Hark's voice through for the rest of the answer
            self._erle = None
            return None
        # normal equations, in einsum's own loops: BLAS's threads spin on a busy machine (an SVD least
        # squares through OpenBLAS took 0.1–0.2 s a chunk here, these ~2 ms)
        gram = np.einsum("ij,ik->jk", a, a)
        ridge = 1e-6 * (np.trace(gram) / self.taps + 1e-9) * np.eye(self.taps, dtype=np.float32)
        h = np.linalg.solve(gram + ridge, np.einsum("ij,i->j", a, m))
        fitted = np.einsum("ij,j->i", a, h)
        resid = m - fitted
        self._erle = 10 * float(np.log10((np.dot(m, m) + 1e-12) / (np.dot(resid, resid) + 1e-12)))
        if self._erle < self.min_erle_db:
            return None
        echo = fitted[-len(x) :]  # x is the window's end
        y = (x - echo).astype(np.float32)
        ee, yy, xx = float(np.dot(echo, echo)), float(np.dot(y, y)), float(np.dot(x, x))
        # the latest audio must be explained too (a window's ERLE hides a path that moved at its end):
        # where the echo taken out is a real part of the chunk, what is left must be 6 dB under it
        if yy > xx or (ee >= 0.1 * xx and yy > 0.25 * ee):
            return None
        self._h = h
        return self._gate(x, y, echo)

    def _gate(self, x: np.ndarray, y: np.ndarray, echo: np.ndarray) -> np.ndarray:
        """What is left of the echo is still speech to a VAD (Silero hears it ~20 dB down, under
        room noise): a block whose residual is more than `gate_db` below the echo taken out of it
        is that residual, and is turned down by `gate_db` more. The user's voice over the answer is
        as loud as the echo or louder at the microphone, so its blocks pass. A block the subtraction
        would make louder keeps the microphone's samples (the answer stopped there)."""
        out = y.copy()
        floor = 10 ** (-self.gate_db / 10)
        for a in range(0, len(y), GATE_BLOCK):
            b = slice(a, a + GATE_BLOCK)
            r, e, m = y[b], echo[b], x[b]
            if float(np.dot(r, r)) > float(np.dot(m, m)):
                out[b] = m  # the answer stopped here (a pause, its end): subtracting would add its voice
            elif float(np.dot(r, r)) < floor * float(np.dot(e, e)):
                out[b] *= np.sqrt(floor)
        return out


def _decimate(x: np.ndarray) -> np.ndarray:
    n = len(x) // DECIMATE * DECIMATE
    return x[:n].reshape(-1, DECIMATE).mean(axis=1)


def _slice(x: np.ndarray, start: int, length: int) -> np.ndarray:
    """x[start : start + length], zeros where that runs outside x."""
    out = np.zeros(length, np.float32)
    a, b = max(start, 0), min(start + length, len(x))
    if b > a:
        out[a - start : b - start] = x[a:b]
    return out
