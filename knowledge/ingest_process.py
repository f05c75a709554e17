"""Ingestion in a child process: the parser stack stays out of the app, and its crashes with it.

Reading documents pulls in unstructured, spaCy, the PDF/OCR stack and large parse buffers, resident
memory a process never gives back (+0.4 GB after 240 text files, +1.2 GB with PDFs and DOCX: see
docs/results.md), and a parser can crash (a segfault in a PDF library) or be killed (out of memory). `run_ingest_process(job, progress)` runs the `Ingestor` in a fresh
`python -m knowledge.ingest_process` (no fork of a process with torch/LanceDB threads): the child
builds its own embedder and store from the same settings (same embedder identity → same table),
ingests, and exits; its memory goes back to the system. The store's commits are atomic, so a child
that dies leaves the index as it was before the file it was reading: the caller refreshes its own
store handle (`ChunkStore.refresh()`) and carries on.

Protocol: the parent writes the job as one JSON line on the child's stdin and keeps stdin open; the
child writes JSON lines on the file descriptor named on its command line: `{"progress": [f, msg]}`,
`{"log": [level, logger, msg]}`, then `{"report": {...}}` or `{"error": {...}}`. The child's
stdout/stderr (C-level messages, a fatal traceback) are logged by the parent at debug. The child
exits as soon as its stdin closes, so it never outlives the parent (even one killed by SIGKILL).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from knowledge.ingest import FileResult, IngestReport
from knowledge.ingest_progress import current_file
from models.runtime.env import ALWAYS
from models.runtime.errors import HarkError

if TYPE_CHECKING:
    from models.settings import EmbedderSettings

log = logging.getLogger("knowledge.ingest_process")  # the same name in the child, run as __main__

Progress = Callable[[float, str], None]
ROOT = Path(__file__).resolve().parent.parent
_EXIT_PARENT_GONE = 75
STARTING = "starting the document reader"
OOM_SCORE_ADJ = 800  # of -1000..1000: the child, not the app, is killed when memory runs out


class IngestProcessError(HarkError):
    """The ingest child crashed, was killed, or could not start; the index is as it was."""


class EmbedderMismatch(HarkError):
    """The child's embedder is not the one the caller expected (its vectors would go elsewhere)."""


@dataclass
class IngestJob:
    """Everything the child needs, as plain data (settings as `model_dump()` dicts)."""

    embedder: dict[str, Any]
    store: dict[str, Any]
    ingest: dict[str, Any]
    uri: str
    paths: list[str]
    rebuild: bool = False
    expect_identity: str = ""  # refuse to ingest when the child's embedder has another identity
    log_level: int = logging.INFO


# ---------------------------------------------------------------- the parent's side


def run_ingest_process(job: IngestJob, progress: Progress | None = None) -> IngestReport:
    """Run `job` in a child process and return its report. Blocks until the child is done.

    Raises `IngestProcessError` when the child dies (signal, crash, exit without a report),
    `EmbedderMismatch` when its embedder differs from `job.expect_identity`, and `HarkError` with
    the child's own message and hint when the ingestion itself failed (e.g. the store unwritable).
    The child is killed if this call ends early (the progress callback raised, KeyboardInterrupt).
    """
    say = progress or (lambda _f, _m: None)
    say(0.0, STARTING)  # the child needs a few seconds before it reports its first file
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "knowledge.ingest_process", str(write_fd)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(write_fd,),
            env=_child_env(),
            close_fds=True,
        )
    except OSError as exc:
        os.close(read_fd)
        raise IngestProcessError(
            f"could not start the indexing process: {exc}", "check free memory and process limits"
        ) from exc
    finally:
        os.close(write_fd)
    output = _OutputTail(proc.stdout)
    output.start()
    last_file = ""
    result: dict[str, Any] = {}
    try:
        with os.fdopen(read_fd, "rb") as messages:
            assert proc.stdin is not None
            try:
                proc.stdin.write((json.dumps(dataclasses.asdict(job)) + "\n").encode())
                proc.stdin.flush()
            except BrokenPipeError:  # it died at start-up: what it said is in `output`
                pass
            for raw in messages:
                msg = _decode(raw)
                if "progress" in msg:
                    fraction, text = msg["progress"]
                    if 0 <= fraction < 1 and text:
                        last_file = current_file(str(text))
                    say(float(fraction), str(text))
                elif "log" in msg:
                    level, name, text = msg["log"]
                    logging.getLogger(str(name)).log(int(level), "%s", text)
                else:
                    result = msg
        try:
            rc: int | None = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # closed its channel yet still running: _stop kills it
            log.warning("the ingest child did not exit after its last message; stopping it")
            rc = None
    finally:
        _stop(proc)
        output.join(timeout=5)
    if "report" in result:
        return report_from_dict(result["report"])
    if "error" in result:
        raise _child_error(result["error"])
    raise _crash(rc, last_file, output.tail())


def report_from_dict(data: dict[str, Any]) -> IngestReport:
    """The `IngestReport` a child sent as JSON (`dataclasses.asdict`)."""
    names = {f.name for f in dataclasses.fields(FileResult)}
    files = [FileResult(**{k: v for k, v in f.items() if k in names}) for f in data.get("files", [])]
    rest = {f.name: data[f.name] for f in dataclasses.fields(IngestReport) if f.name in data and f.name != "files"}
    return IngestReport(files=files, **rest)


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    for key, value in ALWAYS.items():  # the process defaults (OMP passive, no telemetry, …)
        env.setdefault(key, value)
    return env


def _decode(raw: bytes) -> dict[str, Any]:
    try:
        msg = json.loads(raw)
    except ValueError:
        log.debug("ingest child: unreadable message %r", raw[:200])
        return {}
    return msg if isinstance(msg, dict) else {}


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Close the child's stdin (it exits on EOF) and kill it if it is still running."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:
        pass
    if proc.poll() is None:
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _crash(rc: int | None, last_file: str, tail: list[str]) -> IngestProcessError:
    where = f" while reading {last_file!r}" if last_file else ""
    if rc is not None and rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        cause = {
            "SIGKILL": "was killed (SIGKILL — usually the system running out of memory)",
            "SIGSEGV": "crashed (SIGSEGV — a fault in a document reader)",
            "SIGABRT": "aborted (SIGABRT — a fault in a document reader)",
            "SIGBUS": "crashed (SIGBUS — a fault in a document reader)",
        }.get(name, f"was stopped by {name}")
    elif rc is None:
        cause = "stopped responding"
    else:
        cause = f"exited with code {rc} without a report"
    if tail:
        log.warning("ingest child output before it stopped:\n%s", "\n".join(tail))
    return IngestProcessError(
        f"the indexing process {cause}{where}. The library is intact and searchable; files "
        "indexed before that point are kept.",
        "try again; if it stops again, remove or index that file on its own (it may be damaged or "
        "too large), or free some memory",
    )


def _child_error(err: dict[str, Any]) -> HarkError:
    message, hint = str(err.get("message", "")), str(err.get("hint", ""))
    kind = str(err.get("type", ""))
    if kind == "EmbedderMismatch":
        return EmbedderMismatch(message, hint)
    if kind == "StoreWriteError":
        from knowledge.store import StoreWriteError

        return StoreWriteError(message, hint)
    if err.get("hark"):
        return HarkError(message, hint)
    return HarkError(
        f"an unexpected {kind} while indexing: {message}"[:400],
        "the library is unchanged from before the failing step; see the log for details",
    )


class _OutputTail(threading.Thread):
    """Reads the child's stdout/stderr: each line to the log at debug, the last lines kept."""

    def __init__(self, stream: IO[bytes] | None) -> None:
        super().__init__(name="ingest-child-output", daemon=True)
        self._stream = stream
        self._tail: collections.deque[str] = collections.deque(maxlen=15)

    def run(self) -> None:
        if self._stream is None:
            return
        for raw in self._stream:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self._tail.append(line)
                log.debug("ingest child: %s", line)

    def tail(self) -> list[str]:
        self.join(timeout=2)
        return list(self._tail)


# ---------------------------------------------------------------- the child's side


class _Channel:
    """JSON lines to the parent, from any thread."""

    def __init__(self, fd: int) -> None:
        self._out = os.fdopen(fd, "w", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()

    def send(self, **msg: Any) -> None:
        line = json.dumps(msg, default=str) + "\n"
        with self._lock:
            self._out.write(line)
            self._out.flush()


class _ForwardLogs(logging.Handler):
    def __init__(self, channel: _Channel) -> None:
        super().__init__()
        self._channel = channel

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._channel.send(log=[record.levelno, record.name, record.getMessage()])
        except Exception:  # noqa: BLE001 - logging must never break the ingest
            self.handleError(record)


def _exit_when_parent_goes() -> None:
    """The parent holds our stdin open while it waits; EOF means it is done with us or gone."""
    sys.stdin.buffer.read()
    os._exit(_EXIT_PARENT_GONE)


def _ingest(job: IngestJob, channel: _Channel) -> IngestReport:
    from knowledge.ingest import Ingestor
    from knowledge.open_library import open_embedder, open_store
    from knowledge.settings import IngestSettings, StoreSettings
    from models.settings import EmbedderSettings

    # the parent's embedder: MiniLM (configured, or CLIP's offline fallback) is built unloaded, so a
    # run with nothing new to embed never loads a model, and CLIP is not tried again
    embedder = open_embedder(EmbedderSettings(**job.embedder), identity=job.expect_identity)
    if job.expect_identity and embedder.identity != job.expect_identity:
        raise EmbedderMismatch(
            f"the indexing process loaded the embedder {embedder.identity}, the app uses {job.expect_identity}",
            "restart Hark so both load the same embedder",
        )
    store = open_store(embedder, StoreSettings(**job.store), job.uri)
    ingestor = Ingestor(store, embedder, IngestSettings(**job.ingest))
    return ingestor.ingest(
        [Path(p) for p in job.paths],
        rebuild=job.rebuild,
        progress=lambda f, m: channel.send(progress=[float(f), str(m)]),
    )


def configured_identities(settings: EmbedderSettings) -> set[str]:
    """The identities `load_embedder(settings)` can give (nothing is loaded): the configured
    backend's, and MiniLM's when CLIP may fall back to it."""
    from models.embedder import ClipEmbedder, MiniLMEmbedder

    minilm = MiniLMEmbedder(settings).identity
    if settings.backend in ("text", "minilm"):
        return {minilm}
    clip = ClipEmbedder(settings).identity
    return {clip, minilm} if settings.offline_fallback else {clip}


def _first_to_go_when_out_of_memory() -> None:
    """Ask Linux's out-of-memory killer to pick this child before the app (which holds more memory
    until a document bomb grows the child past it). Raising one's own score needs no privilege."""
    try:
        Path("/proc/self/oom_score_adj").write_text(str(OOM_SCORE_ADJ))
    except OSError as exc:
        log.debug("oom_score_adj not set: %s", exc)


def main(argv: list[str]) -> int:
    channel = _Channel(int(argv[1]))
    _first_to_go_when_out_of_memory()
    job = IngestJob(**json.loads(sys.stdin.buffer.readline()))
    threading.Thread(target=_exit_when_parent_goes, name="parent-watch", daemon=True).start()
    root = logging.getLogger()
    root.handlers[:] = [_ForwardLogs(channel)]
    root.setLevel(job.log_level)
    try:
        report = _ingest(job, channel)
    except HarkError as exc:
        channel.send(error={"type": type(exc).__name__, "message": exc.message, "hint": exc.hint, "hark": True})
        return 1
    except Exception as exc:  # noqa: BLE001 - sent to the parent, which turns it into a message
        log.debug("ingest failed:\n%s", traceback.format_exc())
        channel.send(error={"type": type(exc).__name__, "message": str(exc)[:300]})
        return 1
    log.info("ingest child done; its peak resident memory %s", _peak_memory())
    channel.send(report=dataclasses.asdict(report))
    return 0


def _peak_memory() -> str:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return f"{int(line.split()[1]) // 1024} MB"
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # skip interpreter teardown (torch/LanceDB threads): everything is committed
