"""Static CSS and the one small script of the app (a citation link scrolls to its source and opens
the document at the cited passage)."""

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
"""
