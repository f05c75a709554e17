"""Static CSS and the app's scripts: a citation link scrolls to its source and opens the document at
the cited passage; the voice loop's microphone; the spoken answers' player (ui/player_assets.py)."""

from ui.player_assets import PLAYER_SCRIPT

CSS = """
#chat .hark-cite { font-weight: 600; text-decoration: none; color: #e8710a; cursor: pointer; }
.hark-meta { font-size: 0.8em; opacity: 0.75; min-height: 1.2em; }
.hark-sources h4, .hark-rerank-box h4 { margin: 0.4em 0; font-size: 0.95em; }
.hark-source { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 6px 9px;
  margin: 6px 0; font-size: 0.85em; transition: background-color 0.4s; }
.hark-source.cited { border-left: 4px solid #e8710a; }
.hark-source.hark-flash { background-color: rgba(232, 113, 10, 0.18); }
.hark-n { color: #e8710a; font-weight: 700; }
.hark-source-meta, .hark-scores { opacity: 0.75; font-size: 0.9em; }
.hark-preview { margin-top: 3px; }
.hark-chunk { white-space: pre-wrap; max-height: 22em; overflow-y: auto; font-size: 0.95em; }
.hark-rerank-note { font-size: 0.8em; opacity: 0.8; }
.hark-sources.empty { opacity: 0.6; font-size: 0.85em; }
.hark-open { color: #e8710a; font-weight: 600; cursor: pointer; }
.hark-details summary { cursor: pointer; opacity: 0.7; font-size: 0.9em; }
#viewer { border: 2px solid #e8710a; border-radius: 8px; max-height: 80vh; overflow-y: auto; }
.hark-viewer-doc { padding: 6px 9px; font-size: 0.85em; }
.hark-viewer-note, .hark-viewer-pages { opacity: 0.75; font-size: 0.9em; }
.hark-page { width: 100%; height: auto; border: 1px solid var(--border-color-primary); margin-top: 4px; }
.hark-doc-text { white-space: pre-wrap; max-height: 60vh; overflow-y: auto; margin-top: 4px; }
mark.hark-passage { background: rgba(255, 214, 0, 0.45); color: inherit; }
#ptt { user-select: none; touch-action: none; }
#ptt.hark-holding { filter: brightness(0.85); outline: 2px solid var(--color-accent); }
.hark-partial { min-height: 1.5em; opacity: 0.85; }
"""

HEAD = """
<script>
(function () {
  function reveal(id, triesLeft) {
    var el = document.getElementById(id);
    if (!el) {
      if (triesLeft > 0) { setTimeout(function () { reveal(id, triesLeft - 1); }, 150); }
      return;
    }
    var box = el.closest('details'); if (box) { box.open = true; }
    el.scrollIntoView({behavior: 'smooth', block: 'center'});
    el.classList.add('hark-flash');
    setTimeout(function () { el.classList.remove('hark-flash'); }, 1600);
  }
  function openSource(id) {
    // the app reads window.harkCite when the hidden button is clicked, and opens the document
    window.harkCite = id + '-' + Date.now();
    var button = document.getElementById('cite-open');
    if (button) { button.click(); }
  }
  document.addEventListener('click', function (ev) {
    var a = ev.target && ev.target.closest ? ev.target.closest('a[href^="#hark-src-"]') : null;
    if (!a) { return; }
    ev.preventDefault();
    var id = a.getAttribute('href').slice(1);
    reveal(id, 20);
    openSource(id);
  }, true);
})();
</script>
<script>
/* The voice loop's page side (ui/voice.py): the microphone captured with Web Audio and posted as
   16-bit PCM to /hark/mic/{token} every ~100 ms, one request at a time (in order, no gaps).
   Push-to-talk: hold #ptt, or the space bar when no text field has the focus; release to send.
   Hands-free (Settings) keeps the microphone open. The server's reply says when an utterance
   ended (press #voice-send: its turn runs) and when the user interrupted Hark (stop playback).
   Every step is logged with its time in window.harkVoiceLog (the voice bench reads it). */
(function () {
  var log = window.harkVoiceLog = [];
  function note(kind, extra) { log.push(Object.assign({kind: kind, t: Date.now()}, extra || {})); }
  function q(sel) { return document.querySelector(sel); }
  function token() { var t = q('#voice-token textarea, #voice-token input'); return t ? t.value : ''; }
  var rec = {on: false, utt: 0, parts: [], count: 0, sending: false, endWanted: null, rate: 48000, every: 0.1,
             handsFree: false, mic: null, opening: null};
  function openMic() {
    if (rec.mic) { return Promise.resolve(rec.mic); }
    if (rec.opening) { return rec.opening; }
    rec.opening = navigator.mediaDevices.getUserMedia(
      {audio: {channelCount: 1, echoCancellation: true, noiseSuppression: true}}
    ).then(function (stream) {
      note('mic-open');
      var ctx = new AudioContext();
      var source = ctx.createMediaStreamSource(stream);
      return capture(ctx, source, function (x) {
        if (!rec.on) { return; }
        var pcm = new Int16Array(x.length);
        for (var i = 0; i < x.length; i++) {
          var v = Math.max(-1, Math.min(1, x[i])); pcm[i] = v < 0 ? v * 32768 : v * 32767;
        }
        rec.parts.push(pcm); rec.count += pcm.length; rec.rate = ctx.sampleRate;
        if (!rec.sending && rec.count >= rec.rate * rec.every) { send(false, false); }
      }).then(function (node) {
        note('capture', {how: node.port ? 'worklet' : 'script'});
        rec.mic = {stream: stream, ctx: ctx, node: node, source: source};
        rec.opening = null;
        return rec.mic;
      });
    }).catch(function (err) { rec.opening = null; note('mic-error'); throw err; });
    return rec.opening;
  }
  /* The samples, in blocks of 2048, to onFrames: from an AudioWorklet (on the audio thread, so a
     busy page delays the blocks but never drops them), else a ScriptProcessor (on the page's
     thread). Both output silence. */
  var WORKLET = "registerProcessor('hark-capture', class extends AudioWorkletProcessor {" +
    "constructor() { super(); this.buf = new Float32Array(2048); this.n = 0; }" +
    "process(inputs) { var c = inputs[0] && inputs[0][0]; if (!c) { return true; }" +
    "for (var i = 0; i < c.length; i++) { this.buf[this.n++] = c[i];" +
    "if (this.n === this.buf.length) { this.port.postMessage(this.buf); this.buf = new Float32Array(2048); this.n = 0; } }" +
    "return true; } });";
  function capture(ctx, source, onFrames) {
    function script() {
      var node = ctx.createScriptProcessor(2048, 1, 1);
      node.onaudioprocess = function (ev) { onFrames(ev.inputBuffer.getChannelData(0)); };
      source.connect(node); node.connect(ctx.destination);
      return node;
    }
    if (!ctx.audioWorklet || !window.AudioWorkletNode) { return Promise.resolve(script()); }
    var url = URL.createObjectURL(new Blob([WORKLET], {type: 'application/javascript'}));
    return ctx.audioWorklet.addModule(url).then(function () {
      URL.revokeObjectURL(url);
      var node = new AudioWorkletNode(ctx, 'hark-capture', {numberOfInputs: 1, numberOfOutputs: 1});
      node.port.onmessage = function (ev) { onFrames(ev.data); };
      source.connect(node); node.connect(ctx.destination);
      return node;
    }, function () { URL.revokeObjectURL(url); return script(); });
  }
  function closeMic() {
    var m = rec.mic; rec.mic = null;
    if (!m) { return; }
    if (m.node.port) { m.node.port.onmessage = null; }
    m.node.disconnect(); m.source.disconnect();
    m.stream.getTracks().forEach(function (t) { t.stop(); });
    m.ctx.close();
  }
  function send(end, quiet) {
    if (rec.sending) { if (end) { rec.endWanted = {quiet: quiet}; } return; }
    if (!token()) {  /* the page is still loading: keep the audio until the tab has its token */
      if (end) { setTimeout(function () { send(true, quiet); }, 50); }
      return;
    }
    var pcm = new Int16Array(rec.count), at = 0;
    rec.parts.forEach(function (p) { pcm.set(p, at); at += p.length; });
    if (at > rec.rate * 0.5) { note('late-chunk', {ms: Math.round(at * 1000 / rec.rate)}); }
    rec.parts = []; rec.count = 0; rec.sending = true;
    var url = '/hark/mic/' + encodeURIComponent(token()) + '?utt=' + rec.utt + '&rate=' + rec.rate +
              (end ? '&end=1' : '') + (quiet ? '&quiet=1' : '');
    fetch(url, {method: 'POST', body: pcm.buffer}).then(function (r) { return r.json(); })
      .then(handle, function () { note('send-error'); })
      .finally(function () {
        rec.sending = false;
        if (rec.endWanted) { var e = rec.endWanted; rec.endWanted = null; send(true, e.quiet); }
        else if (rec.on && rec.count >= rec.rate * rec.every) { send(false, false); }
      });
  }
  function showPartial(html) { var el = q('#hark-partial'); if (el) { el.innerHTML = html || ''; } }
  function handle(reply) {
    if (!reply) { return; }
    rec.every = (reply.send_ms || 100) / 1000;  /* sooner in a pause (the server says when) */
    var speech = window.harkSpeech;
    if (reply.hold && speech) { speech.hold(); }
    if (reply.resume && speech) { speech.resume(); }
    if (reply.barge) { note('barge-in'); if (speech) { speech.stop(); } }
    if (reply.turn) {
      note('turn'); showPartial('');
      var b = q('#voice-send'); if (b) { b.click(); }
    } else if (rec.on) { showPartial(reply.partial); }
  }
  function start() {
    rec.utt += 1; rec.parts = []; rec.count = 0; rec.on = true; rec.every = 0.1;
    return openMic().catch(function () { rec.on = false; });
  }
  var holding = false;
  function press() {
    if (holding || rec.handsFree) { return; }
    holding = true; note('press');
    var b = q('#ptt'); if (b) { b.classList.add('hark-holding'); }
    if (window.harkSpeech) { window.harkSpeech.stop(); }
    start();
  }
  function release() {
    if (!holding) { return; }
    holding = false; note('release');
    var b = q('#ptt'); if (b) { b.classList.remove('hark-holding'); }
    var opening = rec.opening || Promise.resolve();
    opening.then(function () {
      rec.on = false; send(true, false); closeMic();
    });
  }
  document.addEventListener('pointerdown', function (ev) {
    if (ev.target.closest && ev.target.closest('#ptt')) { ev.preventDefault(); press(); }
  }, true);
  document.addEventListener('pointerup', function () { release(); }, true);
  document.addEventListener('pointercancel', function () { release(); }, true);
  function typing(el) {
    return el && el.closest && el.closest('input, textarea, select, [contenteditable="true"]');
  }
  document.addEventListener('keydown', function (ev) {
    if (ev.code !== 'Space' || typing(ev.target)) { return; }
    ev.preventDefault();
    if (!ev.repeat) { press(); }
  }, true);
  document.addEventListener('keyup', function (ev) {
    if (ev.code !== 'Space' || typing(ev.target)) { return; }
    ev.preventDefault(); release();
  }, true);
  window.harkHandsFree = function (on) {
    note(on ? 'hands-free-on' : 'hands-free-off');
    if (window.harkSpeech) { window.harkSpeech.awake(on); }
    if (on && !rec.handsFree) { rec.handsFree = true; start(); }
    if (!on && rec.handsFree) { rec.handsFree = false; rec.on = false; send(true, true); closeMic(); }
  };
})();
</script>
"""

HEAD += PLAYER_SCRIPT
