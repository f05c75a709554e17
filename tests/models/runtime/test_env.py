"""models/runtime/env.py: the process defaults are set before anything heavy is imported, a value the
user exported wins, and only tests/benches (not the app) forbid the hub. Each case runs in a fresh
interpreter with a clean environment, since these variables only matter at first import."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

NAMES = [
    "OMP_WAIT_POLICY",
    "TOKENIZERS_PARALLELISM",
    "DO_NOT_TRACK",
    "GRADIO_ANALYTICS_ENABLED",
    "HF_HUB_DISABLE_TELEMETRY",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
]


REPORT = """
import json, os, sys
names = json.loads(NAMES_ARG)
heavy = sorted(m for m in ("torch", "transformers", "gradio", "unstructured") if m in sys.modules)
print(json.dumps({"env": {k: os.environ.get(k) for k in names}, "heavy": heavy}))
"""


def _child(code: str, **env: str) -> dict:
    """Run `code` in a fresh interpreter without any of NAMES set (plus `env`); what it ends with."""
    clean = {k: v for k, v in os.environ.items() if k not in NAMES}
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nNAMES_ARG = sys.argv[1]\n" + code + "\n" + REPORT,
            json.dumps(NAMES),
        ],
        cwd=ROOT,
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_defaults_without_importing_anything_heavy():
    got = _child("from models.runtime.env import prepare_process_env; prepare_process_env()")
    assert got["heavy"] == []
    assert got["env"] == {
        "OMP_WAIT_POLICY": "PASSIVE",
        "TOKENIZERS_PARALLELISM": "false",
        "DO_NOT_TRACK": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_OFFLINE": None,  # the app keeps the hub
        "TRANSFORMERS_OFFLINE": None,
    }


def test_offline_forbids_the_hub_and_exported_values_win():
    got = _child(
        "from models.runtime.env import prepare_process_env; prepare_process_env(offline=True)",
        OMP_WAIT_POLICY="ACTIVE",
        HF_HUB_OFFLINE="0",
    )
    assert got["env"]["OMP_WAIT_POLICY"] == "ACTIVE"
    assert got["env"]["HF_HUB_OFFLINE"] == "0"
    assert got["env"]["TRANSFORMERS_OFFLINE"] == "1"
    assert got["env"]["TOKENIZERS_PARALLELISM"] == "false"


def test_launch_sets_the_defaults_but_never_forces_offline():
    code = (
        "import runpy, sys\nsys.argv = ['launch.py', '--help']\n"
        "try:\n    runpy.run_path('launch.py', run_name='__main__')\nexcept SystemExit:\n    pass"
    )
    got = _child(code)
    assert got["env"]["OMP_WAIT_POLICY"] == "PASSIVE"
    assert got["env"]["HF_HUB_OFFLINE"] is None and got["env"]["TRANSFORMERS_OFFLINE"] is None
    assert "torch" not in got["heavy"]
