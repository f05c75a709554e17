"""Settings of the knowledge layer (storage, ingestion, retrieval, rerank)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# storage option keys that carry credentials: they come from the environment only, never the config
_CREDENTIAL_WORDS = ("secret", "token", "password", "access_key", "account_key", "sas", "service_account", "credential")


def _is_credential(option: str) -> bool:
    return any(w in option.lower() for w in _CREDENTIAL_WORDS)
class FtsSettings(_Strict):
    """LanceDB's full-text tokenizer (`lancedb.index.FTS`); a change rebuilds the index (its name
    carries these settings), the vectors stay."""

    # simple: split on whitespace and punctuation; ngram: character n-grams (typos still share most)
    base_tokenizer: Literal["simple", "whitespace", "ngram"] = "simple"
    language: str = "English"  # for stemming and stop words
    stem: bool = True
    remove_stop_words: bool = True
    ascii_folding: bool = True  # é → e, ü → u
    ngram_min_length: int = Field(3, ge=1)
    ngram_max_length: int = Field(3, ge=1)


class StoreSettings(_Strict):
    # folder for the LanceDB tables, manifest, traces; relative paths resolve against the config file
    data_dir: str = "data"
    # LanceDB URI; None means <data_dir>/lancedb. Accepts s3://bucket/prefix (S3 or an S3-compatible
    # server) or db://… (LanceDB Cloud)
    uri: str | None = None
    # object-store options passed to lancedb.connect (endpoint, region, allow_http, timeout,
    # client_max_retries, …); credentials are refused here: they come from the environment
    # (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN)
    storage_options: dict[str, str] = Field(default_factory=dict)
    table_prefix: str = "chunks"
    # build an approximate (IVF) vector index once the table holds this many chunks
    ann_threshold: int = Field(20000, ge=256)
    # ivf_flat: full vectors per partition (recall@50 1.000 at 100k, bench/search.py); ivf_pq: compressed,
    # re-ranked exactly by refine_factor (recall@50 0.837 at nprobes 32 / refine 4)
    ann_index: Literal["ivf_pq", "ivf_flat"] = "ivf_flat"
    ann_partitions: int | None = Field(None, ge=1)  # None: sqrt(number of chunks)
    ann_nprobes: int = Field(32, ge=1)
    ann_refine_factor: int = Field(4, ge=1)
    # exact search below ann_threshold from an in-memory snapshot: vectors (≤ 40 MB at 20k × 512) and
    # the hit columns (~3 KB per 500-word chunk)
    memory_search: bool = True
    # the library shows other processes' commits (CLI ingest, the ingest child, other machines) within this time
    refresh_seconds: float = Field(2.0, ge=0)
    # one ingest at a time per library: a crashed ingest's lock expires after this long (its
    # holder renews it every third of it); on the same machine a dead holder is seen at once
    ingest_lock_seconds: float = Field(60.0, ge=3)

    @field_validator("storage_options", mode="before")
    @classmethod
    def _no_credentials(cls, value: object) -> object:
        """Credentials are refused (HarkConfig hides the input of errors, so this cannot echo them);
        YAML's booleans and numbers become the strings the object store reads ("true", "3")."""
        if not isinstance(value, dict):
            return value
        refused = sorted(str(k) for k in value if _is_credential(str(k)))
        if refused:
            raise ValueError(
                f"store.storage_options must not hold credentials ({', '.join(refused)}): set them in the "
                "environment instead (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)"
            )
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}
    fts: FtsSettings = Field(default_factory=FtsSettings)


class IngestSettings(_Strict):
    chunk_words: int = Field(250, ge=20)  # chosen on long PDF manuals (docs/results.md, "Long documents")
    overlap_words: int = Field(50, ge=0)
    embed_batch_size: int = Field(64, ge=1)
    write_batch_size: int = Field(512, ge=1)
    # commit the files read so far at least this often (seconds; 0 = after every file): a run that is
    # killed keeps every file committed before, and the next run does only the rest
    commit_seconds: float = Field(5.0, ge=0)
    max_file_mb: float = Field(50.0, gt=0)
    extensions: list[str] = [".pdf", ".docx", ".html", ".htm", ".md", ".markdown", ".txt"]
    ocr: Literal["auto", "off"] = "auto"
    # process: the app reads documents in a child process (its memory is returned, a parser crash
    # cannot end the app); inline: in the calling process (the CLI `ingest` always runs inline)
    isolation: Literal["process", "inline"] = "process"
    # when this embedder's index is empty and another embedder's (or layout's) index holds the
    # library, embed its files again at start-up (the app in the background; `ask`/`chat` first)
    auto_reindex: bool = True


class RerankSettings(_Strict):
    # "paper": the published setting (complete graph, cosine edges, damping 0.85, PPR order);
    # "custom": the fields below; "off": no diffusion stage
    mode: Literal["paper", "custom", "off"] = "off"
    damping: float = Field(0.85, gt=0, lt=1)
    graph: Literal["complete", "knn"] = "complete"
    knn_k: int = Field(10, ge=1)
    edge: Literal["cosine", "shifted", "temperature"] = "cosine"
    temperature: float = Field(0.05, gt=0)
    # divide PPR by each candidate's weighted degree (removes the centrality bias of raw PPR)
    degree_correct: bool = False
    # final score = (1 - fusion_weight) * z(first-stage) + fusion_weight * z(diffusion); 1.0 = pure PPR
    fusion_weight: float = Field(0.0, ge=0, le=1)


class RetrievalSettings(_Strict):
    candidates: int = Field(20, ge=1)  # per search (dense, full-text)
    top_k: int = Field(20, ge=1)
    # "dense": vectors only; "hybrid": dense + full-text fused
    search: Literal["dense", "hybrid"] = "hybrid"
    # hybrid candidates. "union": the dense top `candidates` ∪ the full-text top `candidates`, all
    # kept for the fusion (a keyword match is never cut before it is scored); "dense": the dense
    # top `candidates` re-scored with their BM25 (zscore), or the fused lists cut to `candidates` (rrf)
    pool: Literal["union", "dense"] = "union"
    fusion: Literal["zscore", "rrf"] = "zscore"
    bm25_weight: float = Field(1.0, ge=0)
    rrf_k: int = Field(60, ge=1)
    # no candidate with a dense cosine at or above this → `Retrieval.relevant` is False (a turn
    # decides answerability with the fitted model in assistant/answerability.py instead)
    min_score: float = Field(0.25, ge=-1, le=1)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
