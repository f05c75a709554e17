"""The microphone's HTTP route: the page posts raw 16-bit PCM chunks of the tab's recording.

    POST /hark/mic/{token}?utt=N&rate=48000[&end=1][&quiet=1]   body: int16 little-endian mono
    → {"partial": html, "turn": bool, "barge": bool, "hold": bool, "resume": bool}
    POST /hark/mic/{token}/playback?state=playing|idle          the page is (not) playing an answer

`token` is the tab's random voice token (ui/voice.py); an unknown token is a 404, a body over
1 MB (about 10 s at 48 kHz) a 413. The page sends one request at a time, so chunks arrive in order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import numpy as np
from fastapi import Request
from fastapi.responses import JSONResponse

from ui.voice import VoiceLoop

log = logging.getLogger(__name__)

MAX_BODY = 1 << 20


def mount_voice_routes(app: Any, loop: VoiceLoop) -> None:
    """Add the routes to the running Gradio (FastAPI) app."""

    async def chunk(token: str, request: Request) -> JSONResponse:
        voice = loop.find(token)
        if voice is None:
            return JSONResponse({"error": "unknown voice token (reload the page)"}, status_code=404)
        body = await request.body()
        if len(body) > MAX_BODY:
            return JSONResponse({"error": "chunk too large"}, status_code=413)
        q = request.query_params
        try:
            utterance = int(q.get("utt", "0"))
            rate = int(q.get("rate", "48000"))
        except ValueError:
            return JSONResponse({"error": "utt and rate must be integers"}, status_code=400)
        if not 8000 <= rate <= 192000:
            return JSONResponse({"error": "unsupported sample rate"}, status_code=400)
        samples = np.frombuffer(body[: len(body) // 2 * 2], dtype="<i2")
        end, quiet = q.get("end") == "1", q.get("quiet") == "1"
        reply = await asyncio.to_thread(loop.chunk, voice, utterance, samples, rate, end, quiet)
        return JSONResponse(reply.as_json())

    async def playback(token: str, request: Request) -> JSONResponse:
        voice = loop.find(token)
        if voice is None:
            return JSONResponse({"error": "unknown voice token"}, status_code=404)
        voice.playing = request.query_params.get("state") == "playing"
        if not voice.playing:
            voice.idle_at = time.monotonic()
        return JSONResponse({"playing": voice.playing})

    app.add_api_route("/hark/mic/{token}", chunk, methods=["POST"])
    app.add_api_route("/hark/mic/{token}/playback", playback, methods=["POST"])
