"""The Gradio app: push-to-talk chat with streamed, cited answers, the rerank picture, a document
library and per-tab settings — all rendered from `Assistant` events (no business logic here).

`build_app(assistant, cfg)` makes the Blocks; `run_app(cfg, share, host, port)` loads the models
once, then serves. Each browser tab holds its own `ChatState` (and so its own `Session`) in
`gr.State`; the models and the store are shared by all tabs.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gradio as gr

from assistant.config import HarkConfig
from assistant.events import AudioInput
from assistant.memory import STRATEGIES
from models.runtime.errors import HarkError
from models.runtime.heap import trim_heap
from ui.assets import CSS, HEAD
from ui.chat import ChatState, evidence_html, run_turn
from ui.export import export_files
from ui.launch_plan import LaunchPlan, launch_plan
from ui.library_tab import LibraryView
from ui.page_view import citation_viewer
from ui.render import status_markdown
from ui.speaker import SpeechQueue
from ui.uploads import UploadGuard
from ui.voice import VoiceLoop
from ui.voice_routes import mount_voice_routes
from ui.voice_view import voice_controls, voice_settings, wire_voice

if TYPE_CHECKING:
    from assistant.assistant import Assistant

log = logging.getLogger(__name__)

MEMORY_CHOICES = list(STRATEGIES)


def _prompt_choices(cfg: HarkConfig) -> tuple[list[str], list[str]]:
    """(prompt profiles, reasoning strategies) offered in Settings; the defaults when unreadable."""
    try:
        from assistant.prompts.builder import PromptBuilder

        builder = PromptBuilder(cfg.prompts)
        return list(builder.profiles), list(builder.strategies)
    except Exception:  # noqa: BLE001 - the settings tab still works with the configured names
        log.warning("could not read the prompt profiles", exc_info=True)
        return [cfg.prompts.profile], [cfg.prompts.reasoning]


def build_app(assistant: Assistant, cfg: HarkConfig, *, server_folders: bool = True) -> gr.Blocks:
    """`server_folders`: the Library tab may watch folders of this computer (only for an app
    without a login, i.e. local and not shared: see launch_plan)."""
    guard = UploadGuard(
        cfg.path(cfg.ui.library_dir), cfg.ui.max_upload_mb, cfg.ui.max_upload_files, cfg.ingest.extensions
    )
    library = LibraryView(assistant, guard, after_change=trim_heap)
    profiles, strategies = _prompt_choices(cfg)
    loop = VoiceLoop(assistant, cfg.speech.streaming)  # the microphone streamed (ui/voice.py)
    speaking_now = threading.BoundedSemaphore(cfg.ui.concurrency_limit)  # answers synthesised at once

    def ensure(state: ChatState | None) -> ChatState:
        return state if state is not None else ChatState(session=assistant.new_session())

    def chat_outputs(state: ChatState, clear_box: bool = False) -> tuple:
        view = state.turn_view(None)
        return (
            [dict(m) for m in state.messages],
            "" if clear_box else gr.skip(),
            evidence_html(view),
            view.meta if view else "",
            state,
        )

    def turn(state: ChatState | None, user_input: str | AudioInput):
        state = ensure(state)
        speaking = bool(getattr(state.session, "speak_answers", False))
        speech = state.speech = SpeechQueue()
        feed, end = (speech.feed, speech.finish) if speaking else (None, None)
        if speaking:  # the page hears of the new answer now (and drops the previous one's rest)
            speech.answer = state.voice.outbox.begin()
            speak(state, speech)  # synthesis starts now, not after a round trip through the page
        first = True
        try:
            for current in run_turn(assistant.respond, state, user_input, on_answer_text=feed, on_answer_end=end):
                yield chat_outputs(current, clear_box=first)
                first = False
        finally:
            speech.finish()

    def speak(state: ChatState, speech: SpeechQueue) -> None:
        """Synthesise the answer's sentences into the tab's outbox, which the page polls, on a thread
        of their own (at most `ui.concurrency_limit` answers at once); a synthesis failure is shown
        as a warning while the turn's event lasts (the thread runs in its context)."""
        session = state.session  # its answer's first piece may be synthesised ahead (assistant.speculation)

        def run() -> None:
            with speaking_now:
                speech.speak_into(
                    state.voice.outbox, lambda text: assistant.synthesise(text, session), on_error=gr.Warning
                )

        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(run,), name="hark-speak", daemon=True).start()

    def ask(text: str, state: ChatState | None):
        if not (text or "").strip():
            yield chat_outputs(ensure(state))
            return
        yield from turn(state, text.strip())

    def voice(audio: tuple[int, Any] | str | None, state: ChatState | None):
        if audio is None:
            gr.Warning("No recording received. Press the microphone, speak, then stop.")
            yield chat_outputs(ensure(state))
            return
        if isinstance(audio, str):
            user_input = AudioInput(path=audio)
        else:
            rate, samples = audio
            user_input = AudioInput(samples=samples, sample_rate=int(rate))
        yield from turn(state, user_input)

    def stop(state: ChatState | None) -> None:
        if state is not None and (state.voice.outbox.stop() | state.stop()):
            gr.Info("Stopped.")

    def show_turn(state: ChatState | None, evt: gr.SelectData):
        if state is None:
            return gr.skip(), gr.skip()
        index = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
        view = state.turn_view(int(index) if index is not None else None)
        return evidence_html(view), (view.meta if view else "")

    def open_source(request: str, state: ChatState | None):
        content = citation_viewer(assistant, state.turns if state is not None else [], request)
        if content is None:
            return gr.skip(), gr.skip()
        return gr.update(visible=True), content

    def export_conversation(state: ChatState | None):
        if state is None or not any(t.answer is not None for t in state.turns):
            gr.Info("Nothing to download yet: ask a question first.")
            return gr.skip()
        return gr.update(value=export_files(state.turns), visible=True)

    def setter(attr: str):
        def set_value(value: Any, state: ChatState | None) -> ChatState:
            state = ensure(state)
            setattr(state.session, attr, value)
            return state

        return set_value

    def on_load(state: ChatState | None):
        state = ensure(state)
        s = state.session
        return (
            state,
            bool(getattr(s, "always_web_search", False)),
            getattr(s, "memory_strategy", cfg.memory.strategy),
            getattr(s, "reasoning", cfg.prompts.reasoning),
            getattr(s, "profile", cfg.prompts.profile),
            bool(getattr(s, "speak_answers", False)),
            status_text(),
            loop.register(state.voice, s),
        )

    def status_text() -> str:
        try:
            return status_markdown(assistant.status())
        except Exception:  # noqa: BLE001 - the status area never breaks the page
            log.warning("status unavailable", exc_info=True)
            return "Status unavailable."

    with gr.Blocks(title="Hark") as demo:
        state = gr.State(None)
        gr.Markdown("## Hark — ask your documents, by voice or text")
        with gr.Tabs():
            with gr.Tab("Chat", id="chat-tab"):
                with gr.Row():
                    with gr.Column(scale=3):
                        chatbot = gr.Chatbot(
                            elem_id="chat",
                            height=480,
                            show_label=False,
                            feedback_options=None,
                            placeholder="Ask a question about your documents: type it, or hold the 🎙️ button (or the space "
                            "bar) while you speak and let go to send.",
                        )
                        meta = gr.Markdown(elem_id="meta", elem_classes=["hark-meta"])
                        with gr.Row():
                            question = gr.Textbox(
                                elem_id="question",
                                show_label=False,
                                placeholder="Type a question and press Enter…",
                                scale=6,
                                lines=1,
                                max_lines=6,
                            )
                            send = gr.Button("Send", variant="primary", elem_id="send", scale=1, min_width=80)
                            stop_btn = gr.Button(
                                "Stop", variant="stop", elem_id="stop", scale=1, min_width=80
                            )
                        with gr.Row():
                            export = gr.Button("Download conversation", size="sm", elem_id="export", scale=1)
                            exported = gr.File(
                                label="Conversation (Markdown, JSON)", file_count="multiple", visible=False,
                                elem_id="exported", interactive=False, scale=3,
                            )
                        with gr.Row():
                            with gr.Column(scale=1, min_width=240):
                                controls = voice_controls()
                            # the page plays spoken answers itself (ui/player_assets.py) and replays the last one
                            gr.Button("🔊 Hear the answer again", size="sm", elem_id="hear-again")
                    with gr.Column(scale=2):
                        with gr.Group(visible=False, elem_id="viewer") as viewer:
                            viewer_doc = gr.HTML(elem_id="viewer-doc")
                            close_viewer = gr.Button("Close", size="sm", elem_id="viewer-close")
                        evidence = gr.HTML(evidence_html(None), elem_id="evidence")
                        cite_request = gr.Textbox(visible="hidden", elem_id="cite-request", show_label=False)
                        cite_open = gr.Button(visible="hidden", elem_id="cite-open")
            with gr.Tab("Library", id="library-tab"):
                gr.Markdown(
                    f"Drop files or a folder to add them (up to {cfg.ui.max_upload_files} files, "
                    f"{cfg.ui.max_upload_mb:g} MB each; {', '.join(cfg.ingest.extensions)})."
                )
                with gr.Row():
                    files = gr.File(file_count="multiple", label="Files", elem_id="upload-files")
                    folder = gr.File(file_count="directory", label="A folder", elem_id="upload-folder")
                report = gr.Markdown(elem_id="ingest-report")
                docs = gr.Dataframe(
                    headers=list(LibraryView.COLUMNS),
                    value=library.rows,
                    interactive=False,
                    elem_id="docs",
                    wrap=True,
                )
                with gr.Row():
                    pick = gr.Dropdown(label="Document", choices=library.names(), elem_id="doc-pick", scale=4)
                    delete = gr.Button("Delete document", variant="stop", elem_id="delete-doc", scale=1)
                    reindex = gr.Button("Re-index library", elem_id="reindex", scale=1)
                    drop_failed = gr.Button("Remove failed files", elem_id="remove-failed", scale=1)
                with gr.Row(visible=server_folders):
                    watch_path = gr.Textbox(
                        label="Keep a folder of this computer in sync", elem_id="watch-path", scale=4,
                        placeholder="/home/me/Documents/handbooks",
                    )
                    watch_add = gr.Button("Watch folder", elem_id="watch-add", scale=1)
                watch_status = gr.Markdown(elem_id="watch-status", visible=server_folders)
                watch_seen = gr.State(0)
                watch_timer = gr.Timer(2.0, active=server_folders)
                with gr.Row(visible=False, elem_id="confirm-delete") as confirm_row:
                    confirm = gr.Button("Yes, delete it", variant="stop", elem_id="confirm-delete-yes")
                    cancel = gr.Button("Cancel", elem_id="confirm-delete-no")
            with gr.Tab("Settings", id="settings-tab"):
                web = gr.Checkbox(label="Always search the web", elem_id="always-web")
                memory = gr.Dropdown(MEMORY_CHOICES, label="Memory strategy", elem_id="memory")
                reasoning = gr.Dropdown(
                    strategies,
                    label="Reasoning strategy",
                    elem_id="reasoning",
                )
                profile = gr.Dropdown(
                    profiles,
                    label="Prompt profile",
                    elem_id="profile",
                )
                speak_box = gr.Checkbox(label="Speak answers", elem_id="speak")
                switches = voice_settings(cfg.speech.streaming.end_of_turn_ms)
                status = gr.Markdown(elem_id="status")
                refresh = gr.Button("Refresh status", size="sm")

        chat_out = [chatbot, question, evidence, meta, state]
        ev_submit = question.submit(ask, [question, state], chat_out, api_name="ask")
        ev_send = send.click(ask, [question, state], chat_out, api_name=False)
        voice_events = wire_voice(loop, controls, switches, state, chat_out, turn, chat_outputs, ensure, voice)
        stop_btn.click(
            stop, state, None, cancels=[ev_submit, ev_send, *voice_events], queue=False, api_name=False
        )
        chatbot.select(show_turn, state, [evidence, meta], queue=False, api_name=False)
        # the page script names the clicked source in window.harkCite, then clicks the hidden button
        cite_open.click(
            open_source,
            [cite_request, state],
            [viewer, viewer_doc],
            js="(r, s) => [window.harkCite || r, s]",
            api_name=False,
            concurrency_id="viewer",
        )
        export.click(export_conversation, state, exported, api_name=False)
        close_viewer.click(lambda: gr.update(visible=False), None, viewer, queue=False, api_name=False)

        for box, attr in (
            (web, "always_web_search"),
            (memory, "memory_strategy"),
            (reasoning, "reasoning"),
            (profile, "profile"),
            (speak_box, "speak_answers"),
        ):
            box.change(setter(attr), [box, state], state, queue=False, api_name=False)

        lib_out = [report, docs, pick]
        one_bar = {"show_progress_on": [report]}  # the progress shows once, over the report
        files.upload(library.add, files, lib_out, api_name="upload", **one_bar).then(
            lambda: None, None, files, api_name=False, queue=False
        )
        folder.upload(library.add, folder, lib_out, api_name=False, **one_bar).then(
            lambda: None, None, folder, api_name=False, queue=False
        )
        delete.click(library.ask_delete, pick, [report, confirm_row], api_name=False, queue=False)
        confirm.click(library.delete, pick, lib_out, api_name=False, **one_bar).then(
            lambda: gr.update(visible=False), None, confirm_row, api_name=False, queue=False
        )
        cancel.click(lambda: ("", gr.update(visible=False)), None, [report, confirm_row], api_name=False, queue=False)
        drop_failed.click(library.remove_failed, None, lib_out, api_name=False, **one_bar)
        if server_folders:
            watch_add.click(library.watch, watch_path, [report, watch_status], api_name=False)
            watch_timer.tick(
                library.watch_tick, watch_seen, [watch_status, docs, pick, watch_seen], api_name=False,
                show_progress="hidden",
            )
        reindex.click(library.reindex, None, lib_out, api_name=False, **one_bar)
        refresh.click(status_text, None, status, queue=False, api_name=False)
        demo.load(
            on_load,
            state,
            [state, web, memory, reasoning, profile, speak_box, status, controls.token],
            api_name=False,
        )
        demo.load(library.refresh, None, lib_out, api_name=False)
    demo.hark_voice_loop = loop  # type: ignore[attr-defined] - its microphone route is mounted by serve()
    return demo


def serve(demo: gr.Blocks, cfg: HarkConfig, plan: LaunchPlan, block: bool = True) -> tuple[str, str | None]:
    """Queue and launch `demo` according to `plan`; returns (local URL, share URL or None)."""
    demo.queue(default_concurrency_limit=cfg.ui.concurrency_limit, max_size=cfg.ui.max_queue)
    try:
        _, local_url, share_url = demo.launch(
            **plan.kwargs(),
            prevent_thread_lock=True,
            max_file_size=int(cfg.ui.max_upload_mb * 1024 * 1024),
            show_error=False,
            quiet=True,
            footer_links=["api"],
            css=CSS,
            head=HEAD,
            auth_message="Hark: this shared app requires a login." if plan.auth else None,
        )
    except OSError as exc:
        raise HarkError(
            f"Could not serve the app on {plan.host}:{plan.port}: {exc}",
            "choose another port with --port, or stop what is using it",
        ) from exc
    loop = getattr(demo, "hark_voice_loop", None)
    if loop is not None:
        mount_voice_routes(demo.app, loop)
    if block:
        demo.block_thread()
    return local_url, share_url


def run_app(cfg: HarkConfig, share: bool, host: str | None, port: int | None) -> int:
    """Load every model once, then serve the app until interrupted."""
    from assistant.assistant import Assistant

    plan = launch_plan(cfg.ui, share, host, port, os.environ)
    print("Hark: loading models…", file=sys.stderr, flush=True)
    assistant = Assistant(cfg)
    assistant.warm_up()
    trim_heap()  # the loading's freed heap back to the system
    if cfg.ingest.auto_reindex:  # after a change of embedder; the status panel says what it does
        threading.Thread(target=assistant.reindex_previous, name="hark-reindex", daemon=True).start()
    Path(cfg.path(cfg.ui.library_dir)).mkdir(parents=True, exist_ok=True)
    demo = build_app(assistant, cfg, server_folders=plan.auth is None)
    if plan.auth is not None:
        user, password = plan.auth
        shown = f" password: {password}" if plan.generated_password else f" (password from ${cfg.ui.share_password_env})"
        print(f"Hark: login required — user: {user}{' ' if plan.generated_password else ''}{shown}", flush=True)
    local_url, share_url = serve(demo, cfg, plan, block=False)
    print(f"Hark is running at {local_url}", flush=True)
    if share:
        if share_url:
            print(f"Shared at {share_url} (login required)", flush=True)
        else:
            print(
                "Hark: the share link could not be created (no connection to Gradio's share server — "
                "offline?). The app keeps running locally at " + local_url,
                flush=True,
            )
    try:
        demo.block_thread()
    finally:
        demo.close()
    return 0
