"""The Library tab: uploads → `Assistant.ingest` with a progress bar, the documents table,
delete and re-index. Per-file problems are listed while the rest of the batch goes on."""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gradio as gr

from models.runtime.errors import HarkError
from ui.uploads import StagedUploads, UploadGuard

log = logging.getLogger(__name__)


def _get(obj: Any, *names: str, default: Any = None) -> Any:
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None:
            return value
    return default


def _md(text: Any) -> str:
    """Escape a value for a Markdown table/list (document names can contain anything)."""
    return html.escape(str(text)).replace("|", "&#124;").replace("*", "&#42;").replace("_", "&#95;")


def _time_left(fraction: float, elapsed: float) -> str:
    """" · about N s left" once the run has gone long enough to say (elapsed × the share left)."""
    if not 0.02 <= fraction < 1.0 or elapsed < 2.0:
        return ""
    left = elapsed * (1.0 - fraction) / fraction
    return f" · about {left:.0f} s left" if left < 120 else f" · about {left / 60:.0f} min left"


class LibraryView:
    COLUMNS = ("document", "chunks", "status", "error")

    def __init__(self, assistant: Any, guard: UploadGuard, after_change: Callable[[], Any] | None = None) -> None:
        self.assistant = assistant
        self.guard = guard
        self.after_change = after_change or (lambda: None)  # the app's runtime hook (trim the heap)

    # ---- table ------------------------------------------------------------------------------------
    def _documents(self) -> list[Any]:
        try:
            return list(self.assistant.documents())
        except Exception:  # noqa: BLE001 - an unreadable index shows as empty with a log entry
            log.warning("could not list documents", exc_info=True)
            return []

    def rows(self) -> list[list[Any]]:
        return [
            [
                str(_get(d, "source_path", default="")),
                int(_get(d, "chunks", default=0) or 0),
                str(_get(d, "status", default="indexed")),
                str(_get(d, "error", default="") or ""),
            ]
            for d in self._documents()
        ]

    def names(self) -> list[str]:
        return [r[0] for r in self.rows()]

    def _outputs(self, report: str) -> tuple[str, list[list[Any]], Any]:
        rows = self.rows()
        return report, rows, gr.update(choices=[r[0] for r in rows], value=None)

    def refresh(self) -> tuple[str, list[list[Any]], Any]:
        return self._outputs(gr.skip())

    # ---- actions ----------------------------------------------------------------------------------
    def add(self, paths: Sequence[str] | str | None, progress: gr.Progress = gr.Progress()) -> tuple:  # noqa: B008
        if not paths:
            return self._outputs("")
        if isinstance(paths, str):
            paths = [paths]
        progress(0.0, desc="Saving uploads")
        staged = self.guard.stage([(p, Path(p).name) for p in paths])
        lines = self._staging_lines(staged)
        if staged.saved:
            lines += self._ingest(staged.saved, progress)
        return self._outputs("\n".join(lines))

    def reindex(self, progress: gr.Progress = gr.Progress()) -> tuple:  # noqa: B008
        folder = self.guard.library_dir
        folder.mkdir(parents=True, exist_ok=True)
        lines = ["**Re-indexing the library folder.**"] + self._ingest([folder], progress)
        return self._outputs("\n".join(lines))

    def ask_delete(self, name: str | None) -> tuple[str, Any]:
        """First step of a deletion: say what will go, and show the confirm/cancel buttons."""
        if not name:
            return "Choose a document to delete.", gr.update(visible=False)
        doc = next((d for d in self._documents() if _get(d, "source_path") == name), None)
        copy = " and its uploaded copy" if self._uploaded(doc) else ""
        return (
            f"Delete **{_md(name)}**? Its passages{copy} will be removed from the library.",
            gr.update(visible=True),
        )

    def remove_failed(self) -> tuple:
        """Remove every failed or skipped file from the table (and its uploaded copy)."""
        bad = [d for d in self._documents() if str(_get(d, "status", default="")) in ("failed", "skipped")]
        if not bad:
            return self._outputs("No failed files to remove.")
        lines = [self._delete_one(str(_get(d, "source_path"))) for d in bad]
        return self._outputs(f"**Removed {len(bad)} failed file(s).**\n" + "\n".join(f"- {ln}" for ln in lines))

    def delete(self, name: str | None) -> tuple:
        if not name:
            return self._outputs("Choose a document to delete.")
        return self._outputs(self._delete_one(name))

    def _delete_one(self, name: str) -> str:
        doc = next((d for d in self._documents() if _get(d, "source_path") == name), None)
        try:
            self.assistant.delete_document(name)
        except HarkError as exc:
            return f"⚠️ Could not delete {_md(name)}: {_md(exc.message)}"
        except Exception:  # noqa: BLE001
            log.exception("delete %s failed", name)
            return f"⚠️ Could not delete {_md(name)}."
        finally:
            self.after_change()
        removed = self.guard.remove(name) if self._uploaded(doc) else False
        note = " (and its uploaded copy)" if removed else ""
        return f"Deleted **{_md(name)}**{note}."

    # ---- watched folders --------------------------------------------------------------------------
    def watch(self, path: str | None) -> tuple[str, str]:
        """Start keeping a folder of this computer in sync; → (message, watch status)."""
        folder = Path(str(path or "").strip()).expanduser()
        if not str(path or "").strip():
            return "Type the path of a folder on this computer.", self.watch_status()
        try:
            added = self.assistant.watch(folder)
        except (OSError, HarkError) as exc:
            return f"⚠️ Cannot watch {_md(folder)}: {_md(getattr(exc, 'message', None) or exc)}", self.watch_status()
        said = "Watching" if added else "Already watching"
        return f"{said} **{_md(folder)}**: it is indexed now and again within seconds of any change.", self.watch_status()

    def watch_status(self) -> str:
        watcher = getattr(self.assistant, "watcher", None)
        if watcher is None or not watcher.folders():
            return "No folder is watched."
        lines = ["**Kept in sync:** " + ", ".join(_md(f) for f in watcher.folders()), ""]
        for sync in watcher.syncs[:1]:
            when = time.strftime("%H:%M:%S", time.localtime(sync.at))
            if sync.error:
                lines.append(f"⚠️ {when} {_md(sync.folder.name)}: {_md(sync.error)}")
            elif sync.report is not None:
                changed = [f for f in sync.report.files if f.status != "unchanged"]
                t = sync.report.totals
                summary = ", ".join(f"{n} {k}" for k, n in t.items() if n) or "nothing to do"
                lines.append(f"Last sync of {_md(sync.folder.name)} at {when}: {summary}.")
                lines += self._report_lines(type(sync.report)(files=changed))[1:]
        return "\n".join(lines)

    def watch_tick(self, seen: int | None) -> tuple:
        """Redraw the table and the status after a sync (a timer calls this every few seconds)."""
        watcher = getattr(self.assistant, "watcher", None)
        version = watcher.version if watcher is not None else 0
        if version == (seen or 0):
            return gr.skip(), gr.skip(), gr.skip(), seen
        self.after_change()  # a watched folder was synced: the library changed
        rows = self.rows()
        return self.watch_status(), rows, gr.update(choices=[r[0] for r in rows]), version

    # ---- helpers ----------------------------------------------------------------------------------
    def _uploaded(self, doc: Any) -> bool:
        """True when `doc` was indexed from the library folder (so its copy there is ours to remove)."""
        root = _get(doc, "root", default="") if doc is not None else ""
        try:
            return bool(root) and Path(root).resolve() == self.guard.library_dir
        except OSError:
            return False

    @staticmethod
    def _staging_lines(staged: StagedUploads) -> list[str]:
        lines: list[str] = []
        if staged.message:
            lines.append(f"⚠️ {_md(staged.message)}")
        for r in staged.rejected:
            lines.append(f"- ⚠️ **{_md(r.name)}** — not added: {_md(r.reason)}")
        for given, saved in staged.renamed:
            lines.append(f"- ✏️ **{_md(given)}** was saved as **{_md(saved)}** (a safe file name)")
        return lines

    def _ingest(self, paths: list[Path], progress: gr.Progress) -> list[str]:
        started = time.monotonic()

        def report_progress(fraction: float, message: str) -> None:
            fraction = max(0.0, min(1.0, float(fraction)))
            progress(fraction, desc=str(message)[:100] + _time_left(fraction, time.monotonic() - started))

        try:
            report = self.assistant.ingest(paths, progress=report_progress)
        except HarkError as exc:
            return [f"⚠️ Indexing failed: {_md(exc.message)}" + (f" — {_md(exc.hint)}" if exc.hint else "")]
        except Exception:  # noqa: BLE001 - never a traceback in the page
            log.exception("ingest failed")
            return ["⚠️ Indexing failed unexpectedly; the existing library is unchanged. See the log."]
        finally:
            self.after_change()
        note = self.assistant.library_note()  # a German or mixed library and an English-only embedder
        return self._report_lines(report) + ([f"ℹ️ {_md(note)}"] if note else [])

    @staticmethod
    def _report_lines(report: Any) -> list[str]:
        files = _get(report, "files", "results", default=[]) or []
        lines = []
        for f in files:
            name = _get(f, "source_path", "path", "name", default="?")
            status = str(_get(f, "status", default=""))
            chunks = _get(f, "chunks", default=0)
            reason = str(_get(f, "reason", "error", default="") or "")
            same_as = str(_get(f, "same_as", default="") or "")
            if status == "failed":
                lines.append(f"- ⚠️ **{_md(name)}** — failed: {_md(reason or 'unknown error')}")
            elif same_as and not chunks:
                lines.append(f"- ♻️ **{_md(name)}** — same text as **{_md(same_as)}**: nothing new to index")
            else:
                note = f" — {_md(reason)}" if reason else ""
                lines.append(f"- ✅ **{_md(name)}** — {_md(status)} ({chunks} chunks){note}")
        ok = sum(1 for f in files if str(_get(f, "status", default="")) != "failed")
        head = f"**Indexed {ok} of {len(files)} files.**" if files else "**Nothing to index.**"
        return [head, *lines]
