"""A real S3 server for the object-storage tests: moto in server mode (`ThreadedMotoServer`) on
127.0.0.1, spoken to over HTTP by LanceDB exactly as it speaks to AWS S3 or MinIO.

- `stop()` / `start()` again on the same port: the objects are kept (moto keeps them in this
  process), like an S3 server that went away and came back.
- `require_auth()`: moto checks every request's access key against its IAM users (none exist), so
  any credentials are refused with 403 InvalidAccessKeyId, as a real server refuses a wrong key.
- The test credentials go into the environment (`env()`), where Hark reads them; they are fake but
  treated as secrets: the scans look for them in every output.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

ACCESS_KEY_ID = "AKIAHARKTESTKEY7QX2M"
SECRET_ACCESS_KEY = "hark-test-secret/Zq8vN3rT5yW1pL6kD9sB4cF7gH2jM0"
BUCKET = "hark-library"


class S3Server:
    def __init__(self) -> None:
        self.port = 0
        self._server: Any = None

    def start(self) -> S3Server:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        self.port = self._server.get_host_and_port()[1]
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def create_bucket(self, name: str = BUCKET) -> str:
        import boto3

        client = boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                              aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET_ACCESS_KEY)
        try:
            client.create_bucket(Bucket=name)
        except client.exceptions.BucketAlreadyOwnedByYou:
            pass
        return name

    def new_uri(self, bucket: str = BUCKET) -> str:
        """A fresh library location in the bucket (one per test)."""
        return f"s3://{self.create_bucket(bucket)}/{uuid.uuid4().hex[:12]}"

    def storage_options(self, **extra: str) -> dict[str, str]:
        """Options for this server; few, quick retries so a stopped server fails a test fast."""
        return {"endpoint": self.endpoint, "region": "us-east-1", "allow_http": "true",
                "client_max_retries": "1", "client_retry_timeout": "3", "connect_timeout": "2s", **extra}

    def objects(self, uri: str) -> list[str]:
        """Keys under a library URI (what lives on the storage)."""
        import boto3

        bucket, _, prefix = uri.removeprefix("s3://").partition("/")
        client = boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                              aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET_ACCESS_KEY)
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/")
        return [o["Key"] for page in pages for o in page.get("Contents", [])]

    @contextmanager
    def require_auth(self) -> Iterator[None]:
        from moto import settings
        from moto.core.authorization import ActionAuthenticatorMixin

        before = settings.INITIAL_NO_AUTH_ACTION_COUNT
        settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
        ActionAuthenticatorMixin.request_count = 0
        try:
            yield
        finally:
            settings.INITIAL_NO_AUTH_ACTION_COUNT = before


def env(**extra: str) -> dict[str, str]:
    """The credentials, as a process environment gets them."""
    return {"AWS_ACCESS_KEY_ID": ACCESS_KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY, **extra}


@contextmanager
def credentials(**extra: str) -> Iterator[None]:
    """These credentials in this process's environment, restored afterwards."""
    saved = {k: os.environ.get(k) for k in env(**extra)}
    os.environ.update(env(**extra))
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
