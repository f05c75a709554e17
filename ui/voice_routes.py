"""The voice loop's HTTP routes: the page posts raw 16-bit PCM chunks of the tab's recording and
fetches the spoken answer's sentences.

    POST /hark/mic/{token}?utt=N&rate=48000[&end=1][&quiet=1]   body: int16 little-endian mono
    → {"partial": html, "turn": bool, "barge": bool, "hold": bool, "resume": bool}
    POST /hark/mic/{token}/playback?state=playing|idle          the page is (not) playing an answer
    GET  /hark/speech/{token}?turn=T&n=N    sentence N (0, 1, …) of spoken answer T, once it is ready:
         200 audio/wav (X-Hark-Turn, X-Hark-Index); or 204 with X-Hark-Speech: end (no more),
         stopped (cut short: silence it), or wait (nothing within 20 s: ask again)
    GET  /hark/speech/{token}?after=T       the next answer: 204 with X-Hark-Speech: begin and its
         X-Hark-Turn once one newer than T starts (or wait)
    POST /hark/speech/{token}/stop?turn=T   the page stopped answer T (barge-in, Stop, push-to-talk)

`token` is the tab's random voice token (ui/voice.py); an unknown token is a 404, a body over
1 MB (about 10 s at 48 kHz) a 413. The page sends one chunk at a time, so chunks arrive in order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import numpy as np
from fastapi import Request
from fastapi.responses import JSONResponse, Response

from ui.voice import VoiceLoop, now_ms

log = logging.getLogger(__name__)

MAX_BODY = 1 << 20
SPEECH_WAIT_S = 20.0


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

    async def speech(token: str, request: Request) -> Response:
        voice = loop.find(token)
        if voice is None:
            return JSONResponse({"error": "unknown voice token (reload the page)"}, status_code=404)
        q = request.query_params
        try:
            after = q.get("after")
            turn, n = (int(after), None) if after is not None else (int(q.get("turn", "0")), int(q.get("n", "0")))
        except ValueError:
            return JSONResponse({"error": "turn, n and after must be integers"}, status_code=400)
        item = await voice.outbox.next(turn, n, SPEECH_WAIT_S)
        if item is not None and item.kind == "wav":
            if item.index == 0:
                voice.marks.setdefault("served", now_ms())  # the first sentence left the server (bench.voice)
            loop.served(voice, item.turn, item.index, item.wav)  # what the microphone may hear back
        headers = {"Cache-Control": "no-store"}
        if item is None:
            return Response(status_code=204, headers={**headers, "X-Hark-Speech": "wait"})
        headers["X-Hark-Turn"] = str(item.turn)
        if item.kind != "wav":
            return Response(status_code=204, headers={**headers, "X-Hark-Speech": item.kind})
        headers["X-Hark-Index"] = str(item.index)
        return Response(item.wav, media_type="audio/wav", headers=headers)

    async def stop_speech(token: str, request: Request) -> JSONResponse:
        voice = loop.find(token)
        if voice is None:
            return JSONResponse({"error": "unknown voice token"}, status_code=404)
        try:
            turn = int(request.query_params.get("turn", ""))
        except ValueError:
            return JSONResponse({"error": "turn must be an integer"}, status_code=400)
        return JSONResponse({"stopped": voice.outbox.stop(turn)})

    app.add_api_route("/hark/speech/{token}", speech, methods=["GET"])
    app.add_api_route("/hark/speech/{token}/stop", stop_speech, methods=["POST"])
    app.add_api_route("/hark/mic/{token}", chunk, methods=["POST"])
    app.add_api_route("/hark/mic/{token}/playback", playback, methods=["POST"])
