"""A real ingest in a child process, for tests/knowledge/test_crash.py to SIGKILL.

    python crash_child.py DATA_DIR LIBRARY PAUSE

Prints one `EVENT ...` line per step (flushed) so the parent can kill at a chosen moment. PAUSE is
`commit:N` (sleep after the N-th chunk commit, before its manifest entry is written), `index`
(announce the post-ingest index update, then run it), `batched:SECONDS` (the default batch sizes,
commits every SECONDS) or `none`. The ingest code is the real one;
the child only observes it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from models.runtime.env import prepare_process_env  # noqa: E402

prepare_process_env(offline=True)


def main() -> None:
    data_dir, library, pause = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]

    from knowledge.ingest import Ingestor
    from knowledge.ingest_progress import current_file
    from knowledge.settings import IngestSettings, StoreSettings
    from knowledge.store import ChunkStore
    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    emb.warm_up()
    store = ChunkStore.open(str(data_dir / "lancedb"), emb.identity, emb.dim, StoreSettings())
    commits = 0
    real_replace, real_update = store.replace_files, store.update_indexes

    def replace_files(files):  # type: ignore[no-untyped-def]
        nonlocal commits
        real_replace(files)
        commits += 1
        print(f"EVENT commit {commits} {','.join(files)}", flush=True)
        if pause == f"commit:{commits}":
            time.sleep(120)  # the parent kills us here: chunks committed, manifest not yet written

    def update_indexes():  # type: ignore[no-untyped-def]
        print("EVENT indexing", flush=True)
        real_update()

    store.replace_files = replace_files  # type: ignore[method-assign]
    store.update_indexes = update_indexes  # type: ignore[method-assign]
    print("EVENT ready", flush=True)
    settings = IngestSettings(embed_batch_size=2, write_batch_size=1)
    if pause.startswith("batched:"):  # the shipped batch sizes; commits come from commit_seconds
        settings = IngestSettings(commit_seconds=float(pause.split(":", 1)[1]))
    report = Ingestor(store, emb, settings).ingest(
        [library], progress=lambda _f, m: m and print(f"EVENT file {current_file(m)}", flush=True)
    )
    print(f"EVENT done {report.totals}", flush=True)


if __name__ == "__main__":
    main()
