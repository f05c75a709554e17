"""The page's player of spoken answers (ui/voice_routes.py serves their sentences as WAVs).

A Worker long-polls `/hark/speech/{token}` for each sentence, reads the WAV's samples and hands
them to an AudioWorklet, which plays them back to back on the audio thread. Neither waits for the
page's main thread, which is busiest exactly when the first sentence comes: it renders the turn's
transcript, sources and answer then (docs/voice.md has the measured difference). Where there is
no AudioWorklet (a page served over plain http from another computer is not a secure context) the
main thread plays the same samples as AudioBuffers. `window.harkSpeech` is what the microphone script calls (hold, resume, stop, keep
awake); `window.harkPlayer` is the player's state, which the tests read.
"""

import json

# On the audio thread: a queue of sample blocks for the newest answer, played without gaps. It
# tells the worker when sound starts and when the queue runs dry, with the audio clock's time (the
# worker's port reaches it before any samples can: first on the same port, or through the worker).
WORKLET = r"""
registerProcessor('hark-player', class extends AudioWorkletProcessor {
  constructor() {
    super(); this.q = []; this.pos = 0; this.turn = 0; this.cut = 0; this.on = false; this.feed = null;
    var self = this; this.port.onmessage = function (e) { self.take(e.data); };
  }
  take(d) {
    var self = this;
    if (d.kind === 'port') { this.feed = d.port; this.feed.onmessage = function (e) { self.take(e.data); }; return; }
    if (d.kind === 'drop') {  /* upto: the page's newest answer, which may be older than this one */
      if (d.upto !== undefined && this.turn > d.upto) { return; }
      this.cut = Math.max(this.cut, d.cut || 0); this.q = []; this.pos = 0; this.quiet(true); return;
    }
    if (d.kind !== 'pcm') { return; }
    if (!d.replay && (d.turn < this.turn || d.turn <= this.cut)) { return; }
    if (d.turn > this.turn) { this.q = []; this.pos = 0; this.quiet(true); this.turn = d.turn; }
    this.q.push(d.x);
  }
  quiet(cut) { if (this.on) { this.on = false; this.tell({kind: 'ended', cut: cut, turn: this.turn}); } }
  tell(m) { m.at = currentTime; if (this.feed) { this.feed.postMessage(m); } }
  process(inputs, outputs) {
    var out = outputs[0], ch = out[0], i = 0;
    while (i < ch.length && this.q.length) {
      var b = this.q[0], n = Math.min(ch.length - i, b.length - this.pos);
      ch.set(b.subarray(this.pos, this.pos + n), i); i += n; this.pos += n;
      if (!this.on) { this.on = true; this.tell({kind: 'start', turn: this.turn}); }
      if (this.pos >= b.length) { this.q.shift(); this.pos = 0; }
    }
    for (var c = 1; c < out.length; c++) { out[c].set(ch); }
    if (this.on && !this.q.length) { this.quiet(false); }
    return true;
  }
});
"""

# In a Worker: the long poll. Every message to the page carries the worker's clock (`t`), so the
# voice log says when things happened, not when the busy page got round to hearing of them.
WORKER = r"""
var s = {base: '', token: '', turn: 0, next: -1, cut: 0, rate: 0, out: null, running: false};
function post(m) { m.t = Date.now(); m.next = s.next; self.postMessage(m); }
function report(state) {
  fetch(s.base + '/hark/mic/' + encodeURIComponent(s.token) + '/playback?state=' + state, {method: 'POST'})
    .catch(function () {});
}
function played(ev) {  /* the worklet started or ran dry */
  var d = ev.data;
  if (d.kind === 'start') { report('playing'); post({kind: 'playing', at: d.at, turn: d.turn}); }
  if (d.kind === 'ended') { report('idle'); post({kind: 'ended', cut: d.cut, turn: d.turn}); }
}
self.onmessage = function (ev) {
  var d = ev.data;
  if (d.kind === 'start') { s.base = d.base; s.token = d.token; if (!s.running) { s.running = true; loop(); } }
  else if (d.kind === 'worklet') { s.rate = d.rate; s.out = d.port; s.out.onmessage = played; }
  else if (d.kind === 'cut') { s.cut = Math.max(s.cut, d.turn); if (s.out) { s.out.postMessage({kind: 'drop', cut: d.turn, upto: d.turn}); } }
};
function wav(buf) {  /* 16-bit PCM WAV → {rate, x: Float32Array of the first channel}, or null */
  var v = new DataView(buf), off = 12, rate = 0, ch = 1, bits = 0;
  while (off + 8 <= v.byteLength) {
    var id = String.fromCharCode(v.getUint8(off), v.getUint8(off + 1), v.getUint8(off + 2), v.getUint8(off + 3));
    var size = v.getUint32(off + 4, true);
    if (id === 'fmt ') { ch = v.getUint16(off + 10, true); rate = v.getUint32(off + 12, true); bits = v.getUint16(off + 22, true); }
    if (id === 'data') {
      if (bits !== 16 || !rate || !ch) { return null; }
      var n = Math.floor(Math.min(size, v.byteLength - off - 8) / (2 * ch)), x = new Float32Array(n);
      for (var i = 0; i < n; i++) { x[i] = v.getInt16(off + 8 + 2 * ch * i, true) / 32768; }
      return {rate: rate, x: x};
    }
    off += 8 + size + (size & 1);
  }
  return null;
}
function resample(x, from, to) {  /* linear: only for a voice whose rate is not the player's */
  if (!to || from === to) { return x; }
  var n = Math.round(x.length * to / from), y = new Float32Array(n), r = from / to;
  for (var i = 0; i < n; i++) {
    var p = i * r, k = Math.floor(p), a = x[k] || 0, b = k + 1 < x.length ? x[k + 1] : a;
    y[i] = a + (b - a) * (p - k);
  }
  return y;
}
function begin(turn) {  /* a newer answer: the previous one's rest is dropped at once */
  s.turn = turn;
  if (s.out) { s.out.postMessage({kind: 'drop'}); }
  post({kind: 'begin', turn: turn});
}
function loop() {
  var url = s.base + '/hark/speech/' + encodeURIComponent(s.token) +
            (s.next < 0 ? '?after=' + s.turn : '?turn=' + s.turn + '&n=' + s.next);
  fetch(url, {cache: 'no-store'}).then(function (r) {
    if (!r.ok) { throw new Error('speech ' + r.status); }
    var turn = +r.headers.get('X-Hark-Turn'), kind = r.headers.get('X-Hark-Speech');
    if (r.status === 204) {
      if (kind === 'begin') { s.next = 0; begin(turn); }
      else if (kind === 'end' || kind === 'stopped') {
        s.next = -1;
        if (kind === 'stopped' && turn === s.turn && turn !== s.cut) {
          s.cut = turn; if (s.out) { s.out.postMessage({kind: 'drop', cut: turn, upto: turn}); }
          post({kind: 'stopped', turn: turn});
        } else { post({kind: 'end', turn: turn}); }
      }
      loop(); return;
    }
    return r.arrayBuffer().then(function (data) {
      post({kind: 'fetched'});
      s.next = +r.headers.get('X-Hark-Index') + 1;
      if (turn > s.turn) { begin(turn); }
      loop();
      if (turn === s.cut) { return; }
      var w = wav(data);
      if (!w) { post({kind: 'decode-error'}); return; }
      var x = resample(w.x, w.rate, s.rate), rate = s.rate || w.rate;
      if (s.out) { s.out.postMessage({kind: 'pcm', turn: turn, x: x}); }
      post({kind: 'decoded', turn: turn, seconds: w.x.length / w.rate, x: x, rate: rate, played: !!s.out});
    });
  }).catch(function () { setTimeout(loop, 1000); });
}
"""

PLAYER_SCRIPT = (
    """
<script>
/* Spoken answers (ui/player_assets.py). A hold suspends the AudioContext, a resume resumes it; a
   stop (barge-in, push-to-talk, Stop) drops that answer's sentences, here and on the server; a
   newer answer ends the previous one. The context runs while hands-free listens and is woken by
   any key or press, so the first sentence never waits for it. */
(function () {
  var WORKLET = """
    + json.dumps(WORKLET.strip())
    + """;
  var WORKER = """
    + json.dumps(WORKER.strip())
    + """;
  var log = window.harkVoiceLog = window.harkVoiceLog || [];
  function note(kind, extra) { log.push(Object.assign({kind: kind, t: Date.now()}, extra || {})); }
  function q(sel) { return document.querySelector(sel); }
  function token() { var t = q('#voice-token textarea, #voice-token input'); return t ? t.value : ''; }
  var p = window.harkPlayer = {ctx: null, node: null, worker: null, turn: 0, next: -1, cut: 0, sources: [],
                               endAt: 0, sounding: false, held: false, awake: false, last: [], idleTimer: 0};
  function blobUrl(src) { return URL.createObjectURL(new Blob([src], {type: 'application/javascript'})); }
  function report(state) {
    if (token()) { fetch('/hark/mic/' + encodeURIComponent(token()) + '/playback?state=' + state, {method: 'POST'}); }
  }
  function audio() {
    if (p.ctx) { return p.ctx; }
    try { p.ctx = new AudioContext({sampleRate: 22050}); } catch (e) { p.ctx = new AudioContext(); }
    if (p.ctx.audioWorklet && window.AudioWorkletNode && p.worker) {
      var url = blobUrl(WORKLET), c = p.ctx;
      c.audioWorklet.addModule(url).then(function () {
        URL.revokeObjectURL(url);
        var node = new AudioWorkletNode(c, 'hark-player', {numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [1]});
        node.connect(c.destination);
        var channel = new MessageChannel();
        node.port.postMessage({kind: 'port', port: channel.port1}, [channel.port1]);
        p.worker.postMessage({kind: 'worklet', port: channel.port2, rate: c.sampleRate}, [channel.port2]);
        p.node = node;
        note('player', {how: 'worklet', rate: c.sampleRate});
      }, function () { URL.revokeObjectURL(url); note('player', {how: 'buffers'}); });
    } else { note('player', {how: 'buffers'}); }
    return p.ctx;
  }
  function wake() {
    clearTimeout(p.idleTimer);
    var c = audio(); if (c.state === 'suspended' && !p.held) { c.resume(); }
  }
  ['pointerdown', 'keydown'].forEach(function (name) {  /* a user gesture lets the page make sound */
    document.addEventListener(name, function () {
      var speak = q('#speak input');
      if (p.ctx || (speak && speak.checked)) { wake(); }
    }, true);
  });
  function idle() {  /* an answer's last sentence ended: the context stops rendering silence */
    clearTimeout(p.idleTimer);
    p.idleTimer = setTimeout(function () {
      if (p.ctx && !p.awake && !p.sounding && !p.held && p.next < 0 && p.ctx.state === 'running') { p.ctx.suspend(); }
    }, 2000);
  }
  function playing(t, at) {  /* the worklet started: `t` on the worker's clock */
    p.sounding = true;
    if (!p.held) { log.push({kind: 'playing', t: t, at: at}); }
  }
  function ended(t, cut) {
    if (!p.sounding) { return; }
    p.sounding = false;
    if (!cut) { log.push({kind: 'ended', t: t}); }
    idle();
  }
  function started() {  /* the buffer player, and a resume */
    if (p.held) { return; }
    var c = audio();
    var go = function () { if (p.sounding && !p.held) { note('playing', {at: c.currentTime}); report('playing'); } };
    if (c.state === 'running') { go(); } else { c.resume().then(go); }
  }
  function schedule(item) {  /* the buffer player: one AudioBuffer right after the previous one */
    var c = audio(), buf = c.createBuffer(1, item.x.length, item.rate), src = c.createBufferSource();
    buf.copyToChannel(item.x, 0);
    src.buffer = buf; src.connect(c.destination);
    var at = Math.max(c.currentTime, p.endAt);
    src.start(at); p.endAt = at + buf.duration; p.sources.push(src);
    src.onended = function () {
      var i = p.sources.indexOf(src);
      if (i < 0) { return; }  /* stopped */
      p.sources.splice(i, 1);
      if (!p.sources.length && p.sounding) { p.sounding = false; note('ended'); report('idle'); idle(); }
    };
    if (!p.sounding) { p.sounding = true; started(); }
  }
  function replay(item) {  /* "Hear the answer again": a copy, the kept samples stay */
    if (p.node && item.rate === p.ctx.sampleRate) {
      p.node.port.postMessage({kind: 'pcm', turn: p.turn, x: item.x.slice(), replay: true});
    } else { schedule(item); }
  }
  function silence() {  /* stop what is playing; true if something was playing or held */
    var was = p.sounding || p.held, s = p.sources;
    p.sources = []; p.sounding = false; p.endAt = 0;
    s.forEach(function (src) { try { src.stop(); } catch (e) { /* not started */ } });
    if (p.node) { p.node.port.postMessage({kind: 'drop', upto: p.turn}); }
    if (p.held) { p.held = false; if (p.ctx) { p.ctx.resume(); } }
    return was;
  }
  function fromWorker(ev) {
    var d = ev.data;
    p.next = d.next;
    if (d.kind === 'begin') {
      if (silence()) { log.push({kind: 'ended', t: d.t}); if (!p.node) { report('idle'); } }
      p.turn = d.turn; p.last = []; wake();
    } else if (d.kind === 'fetched' || d.kind === 'decode-error') {
      log.push({kind: d.kind, t: d.t});
    } else if (d.kind === 'decoded') {
      log.push({kind: 'decoded', t: d.t, seconds: d.seconds});
      if (d.turn !== p.turn || d.turn === p.cut) { return; }
      var item = {x: d.x, rate: d.rate};
      p.last.push(item);
      if (!d.played) { schedule(item); }  /* the worker had no worklet yet (or there is none) */
      else if (p.ctx.state === 'suspended' && !p.held) { wake(); }
    } else if (d.kind === 'playing') { playing(d.t, d.at); }
    else if (d.kind === 'ended') { ended(d.t, d.cut); }
    else if (d.kind === 'stopped') {
      if (d.turn === p.turn && d.turn !== p.cut) { p.cut = d.turn; if (silence()) { note('stopped'); report('idle'); } }
    }
  }
  function startWorker() {
    if (!token()) { setTimeout(startWorker, 200); return; }
    p.worker.postMessage({kind: 'start', base: location.origin, token: token()});
  }
  try {
    p.worker = new Worker(blobUrl(WORKER));
    p.worker.onmessage = fromWorker;
    startWorker();
  } catch (e) { note('speech-error'); }
  window.harkSpeech = {
    hold: function () {  /* also keeps the next sentence quiet if it arrives before the resume */
      p.held = true; note('hold');
      if (p.ctx) { p.ctx.suspend(); }
      if (p.sounding) { note('pause'); report('idle'); }
    },
    resume: function () {
      p.held = false; note('resume');
      if (p.sounding) { started(); } else if (p.ctx) { p.ctx.resume(); }
    },
    stop: function () {
      var turn = p.turn;
      if (turn && turn !== p.cut) {
        p.cut = turn;
        if (p.worker) { p.worker.postMessage({kind: 'cut', turn: turn}); }
        if (token()) { fetch('/hark/speech/' + encodeURIComponent(token()) + '/stop?turn=' + turn, {method: 'POST'}); }
      }
      if (silence()) { note('cut'); report('idle'); idle(); }
    },
    awake: function (on) {  /* hands-free: keep the context running for the next answer */
      p.awake = on;
      if (on) { wake(); } else if (!p.sounding) { idle(); }
    },
  };
  document.addEventListener('click', function (ev) {
    var el = ev.target && ev.target.closest ? ev.target : null;
    if (el && el.closest('#stop')) { window.harkSpeech.stop(); }
    if (el && el.closest('#hear-again')) {
      var items = p.last.slice();
      if (silence()) { note('ended'); report('idle'); }
      items.forEach(replay);
      if (!p.node || !items.length) { return; }
      wake();
    }
  }, true);
})();
</script>
"""
)
