"""A room between Hark's speakers and its microphone, for Chromium's fake microphone.

`echo_path_script(delay_s, gain, noise)` is a page init script: whatever the page's player plays
(its AudioContext's output, `window.harkPlayer.ctx`) is also sent through a delay of `delay_s`
and a gain of `gain` and mixed, with room noise (brown noise of RMS `noise`), into the microphone
stream the page gets from `getUserMedia`, after the browser's own audio processing (so only Hark's
server-side echo canceller stands between Hark's voice and its barge-in). The fake device's file
(the user's voice, or quiet) is the rest of the microphone. A file rendered in advance could not
follow the real playback's timing; this path does, as a room does.

`window.harkEcho.taps` counts the player's connections routed into it (the tests check them).
"""

from __future__ import annotations

_SCRIPT = """
(function () {
  var DELAY = %(delay)s, GAIN = %(gain)s, NOISE = %(noise)s;
  var echo = window.harkEcho = {taps: 0, mix: null, dest: null, routed: false, mic: null};
  var connect = AudioNode.prototype.connect;
  function route() {
    if (!echo.mix || !echo.dest || echo.routed) { return; }
    connect.call(echo.mix.ctx.createMediaStreamSource(echo.dest.stream), echo.mix.delay);
    echo.routed = true;
  }
  AudioNode.prototype.connect = function (target) {
    var out = connect.apply(this, arguments);
    var player = window.harkPlayer && window.harkPlayer.ctx;
    if (player && this.context === player && target instanceof AudioDestinationNode) {
      if (!echo.dest || echo.dest.context !== player) { echo.dest = player.createMediaStreamDestination(); echo.routed = false; }
      connect.call(this, echo.dest); echo.taps += 1; route();
    }
    return out;
  };
  function mixer() {
    var ctx = new AudioContext(), out = ctx.createMediaStreamDestination();
    var delay = ctx.createDelay(1.0), gain = ctx.createGain();
    delay.delayTime.value = DELAY; gain.gain.value = GAIN;
    connect.call(delay, gain); connect.call(gain, out);
    var n = ctx.sampleRate * 4, buf = ctx.createBuffer(1, n, ctx.sampleRate), x = buf.getChannelData(0), last = 0, sq = 0;
    for (var i = 0; i < n; i++) { last = 0.98 * last + 0.02 * (Math.random() * 2 - 1); x[i] = last; sq += last * last; }
    var scale = NOISE / Math.sqrt(sq / n);
    for (var j = 0; j < n; j++) { x[j] *= scale; }
    var noise = ctx.createBufferSource(); noise.buffer = buf; noise.loop = true;
    connect.call(noise, out); noise.start();
    ctx.resume();
    echo.mix = {ctx: ctx, out: out, delay: delay};
    route();
  }
  var gum = MediaDevices.prototype.getUserMedia;
  MediaDevices.prototype.getUserMedia = function (constraints) {
    return gum.call(this, constraints).then(function (mic) {
      if (!echo.mix) { mixer(); }
      if (echo.mic) { echo.mic.src.disconnect(); echo.mic.stream.getTracks().forEach(function (t) { t.stop(); }); }
      var src = echo.mix.ctx.createMediaStreamSource(mic);
      connect.call(src, echo.mix.out);
      echo.mic = {src: src, stream: mic};
      return new MediaStream([echo.mix.out.stream.getAudioTracks()[0].clone()]);
    });
  };
})();
"""


def echo_path_script(delay_s: float = 0.1, gain: float = 0.3, noise: float = 0.003) -> str:
    return _SCRIPT % {"delay": delay_s, "gain": gain, "noise": noise}
