"""Fixtures shared by the hostile tests."""

from __future__ import annotations

import pytest

from tests.hostile.injection import FAKE_KEYS


@pytest.fixture(scope="module")
def keys():
    """Every provider key set to a recognisable fake, so a test can look for it in every output."""
    with pytest.MonkeyPatch.context() as mp:
        for k, v in FAKE_KEYS.items():
            mp.setenv(k, v)
        yield FAKE_KEYS
