"""Where the library lives: a LanceDB connection to a local folder or to object storage, and the
failures on the way to it turned into short messages that say what to do and never hold a secret.

- A local folder, `s3://bucket/prefix` (AWS S3 or an S3-compatible server such as MinIO), or
  LanceDB's other URIs. `store.storage_options` go to `lancedb.connect(uri, storage_options=…)`
  (endpoint, region, allow_http, timeout, client_max_retries…); credentials come only from the
  environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN), read by LanceDB.
- Other processes' commits are seen within `store.refresh_seconds` (the read consistency interval)
  for every URI but LanceDB Cloud (`db://`), which has its own.
- Object-store errors carry the server's reply; the message keeps its error code and sentence, with
  every credential value from the environment and any request signature removed.
"""

from __future__ import annotations

import datetime
import errno
import logging
import os
import re
from typing import Any

from knowledge.settings import StoreSettings
from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

# environment variables whose values must never appear in a message or a log line
CREDENTIAL_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "LANCEDB_API_KEY",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_KEY",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
)

_IO_WORDS = ("no space", "read-only", "permission denied", "disk quota", "io error", "input/output")
LOCAL_HINT = "check that the data folder is writable and the disk has free space; the existing index is unchanged"
_CREDENTIAL_CODES = ("invalidaccesskeyid", "signaturedoesnotmatch", "accessdenied", "expiredtoken",
                     "invalidtoken", "tokenrefreshrequired", "status: 403", "status: 401")
_UNREACHABLE = ("error sending request", "connection refused", "tcp connect error", "dns error",
                "timed out", "operation timed out", "connection reset", "broken pipe")
_STORE_WORDS = ("s3 error", "object_store", "objectstore", "generic s3", "retryerror", "store: \"s3\"",
                "gcs error", "azure error", "http error")


class StoreWriteError(HarkError):
    """The library could not be opened or written (read-only folder, disk full, object store
    unreachable or refusing the credentials, …); the index is unchanged."""


def is_remote(uri: str) -> bool:
    """True for object storage and LanceDB Cloud (`scheme://`), False for a folder."""
    return "://" in uri and not uri.startswith("file://")


def connect(uri: str, settings: StoreSettings) -> Any:
    """`lancedb.connect` for this URI and these settings; a failure is a StoreWriteError."""
    import lancedb

    kwargs: dict[str, Any] = {}
    if not uri.startswith("db://"):  # see other processes' commits within refresh_seconds
        kwargs["read_consistency_interval"] = datetime.timedelta(seconds=settings.refresh_seconds)
    if settings.storage_options:
        kwargs["storage_options"] = dict(settings.storage_options)
    try:
        return lancedb.connect(uri, **kwargs)
    except Exception as exc:  # noqa: BLE001 - reported with what to do, without the raw reply
        raise failure(exc, uri, "open the library") from None


def scrub(text: str) -> str:
    """`text` without any credential value of the environment, request signature or URL userinfo."""
    for name in CREDENTIAL_ENV:
        value = os.environ.get(name, "")
        if len(value) >= 4:
            text = text.replace(value, "***")
    text = re.sub(r"(?i)(x-amz-signature|signature|x-amz-credential|x-amz-security-token)=[^&\s,\"']+",
                  r"\1=***", text)
    text = re.sub(r"(?i)<(AWSAccessKeyId|StringToSign|CanonicalRequest|SignatureProvided|"
                  r"StringToSignBytes|CanonicalRequestBytes)>.*?</\1>", r"<\1>***</\1>", text, flags=re.S)
    return re.sub(r"(://)[^/@\s]+:[^/@\s]+@", r"\1***@", text)


def is_io_error(exc: BaseException) -> bool:
    """A local file-system failure (read-only, full, no permission)."""
    if isinstance(exc, OSError) and exc.errno in (
        errno.ENOSPC,
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
        errno.EDQUOT,
    ):
        return True
    text = str(exc).lower()
    return isinstance(exc, OSError | RuntimeError | ValueError) and any(w in text for w in _IO_WORDS)


def is_store_error(exc: BaseException, uri: str) -> bool:
    """A failure talking to object storage (only for a remote URI)."""
    if not is_remote(uri):
        return False
    text = str(exc).lower()
    return any(w in text for w in _STORE_WORDS + _UNREACHABLE + _CREDENTIAL_CODES) or "nosuchbucket" in text


def failure(exc: BaseException, uri: str, what: str) -> StoreWriteError:
    """The StoreWriteError for `exc` raised while trying to `what` (e.g. "write chunks") at `uri`."""
    raw = scrub(str(exc))
    log.debug("storage failure while trying to %s at %s: %s", what, uri, raw[:2000])
    if not is_remote(uri):
        return StoreWriteError(f"could not {what} in {uri}: {short(raw)}", LOCAL_HINT)
    low = raw.lower()
    code = _reply_code(raw)
    if any(c in low for c in _CREDENTIAL_CODES):
        return StoreWriteError(
            f"could not {what} at {uri}: the object store refused the credentials ({code or 'HTTP 403'})",
            "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys) in the "
            "environment, or in .env beside config.yaml, to a key allowed to read and write this bucket",
        )
    if "nosuchbucket" in low:
        return StoreWriteError(
            f"could not {what} at {uri}: the bucket does not exist",
            "create the bucket first, or correct store.uri",
        )
    endpoint = _endpoint(raw)
    if any(w in low for w in _UNREACHABLE):
        return StoreWriteError(
            f"could not {what} at {uri}: the object store did not answer{f' ({endpoint})' if endpoint else ''}",
            "check store.storage_options.endpoint and the network; what was committed before is kept, "
            "run the command again once the store is reachable",
        )
    return StoreWriteError(
        f"could not {what} at {uri}: {code or short(raw)}",
        "check store.uri and store.storage_options; what was committed before is kept",
    )


def short(text: str) -> str:
    """The operating system's words without the Rust source locations lance appends."""
    m = re.search(r"IO\): ([^,]+?)(?: \(os error \d+\))?(?:,| at path|$)", text)
    return m.group(1).strip() if m else text.split(", /")[0][:200]


def _reply_code(text: str) -> str:
    """The error code and sentence of an S3-style XML reply, e.g. "InvalidAccessKeyId: The AWS …"."""
    code = re.search(r"<Code>([^<]{1,80})</Code>", text)
    if not code:
        status = re.search(r"status: (\d{3})", text)
        return f"HTTP {status.group(1)}" if status else ""
    message = re.search(r"<Message>([^<]{1,300})</Message>", text)
    return f"{code.group(1)}: {message.group(1)}" if message else code.group(1)


def _endpoint(text: str) -> str:
    """scheme://host[:port] of the first URL in an error, without path or query."""
    m = re.search(r"(https?://[^/\s:]+(?::\d+)?)", text)
    return m.group(1) if m else ""
