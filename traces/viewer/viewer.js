// The viewer page's timeline; embedded into the page at build time (embed_viewer.cmake).
'use strict';
(function () {
  const statusEl = document.getElementById('status');
  function setStatus(text, state) {
    statusEl.textContent = text;
    document.body.setAttribute('data-status', state);
  }
  window.addEventListener('error', function (e) { setStatus('error: ' + e.message, 'error'); });

  const D = JSON.parse(document.getElementById('data').textContent);
  const canvas = document.getElementById('c');
  const ctx = canvas.getContext('2d');
  const tip = document.getElementById('tip');
  const LABEL = 120, AXIS = 26, ROW = 22, CROW = 40;
  const total = D.total > 0 ? D.total : 1;
  let t0 = 0, t1 = total, pending = false;

  const rows = D.tracks.map(function (t) {
    const n = t.s.length, endMax = new Float64Array(n);
    if (t.critical) t.st = new Float64Array(n);
    let m = -Infinity;
    for (let k = 0; k < n; k++) { m = Math.max(m, t.s[k] + t.d[k]); endMax[k] = m; }
    t.endMax = endMax;
    return t;
  });
  const located = new Map();
  rows.forEach(function (r, row) {
    r.row = row;
    if (r.critical) return;
    for (let k = 0; k < r.i.length; k++)
      if (r.dma || !located.has(r.i[k])) located.set(r.i[k], { r: r, k: k });
  });
  let hovered = null;
  const counters = D.counters.map(function (c) {
    let max = 0;
    for (const v of c.v) max = Math.max(max, v);
    c.max = max > 0 ? max : 1;
    return c;
  });
  const hue = function (i) { return (i * 67 + 200) % 360; };
  const colors = D.opcodes.map(function (_, i) { return 'hsl(' + hue(i) + ',65%,55%)'; });
  const dense = D.opcodes.map(function (_, i) { return 'hsl(' + hue(i) + ',60%,40%)'; });
  for (const r of rows) {
    if (!r.critical) continue;
    r.colors = r.labels.map(function (_, i) { return 'hsl(' + (i * 97 + 20) % 360 + ',45%,62%)'; });
    r.dense = r.labels.map(function (_, i) { return 'hsl(' + (i * 97 + 20) % 360 + ',45%,45%)'; });
  }

  /// DMA efficiency view: transfers coloured by achieved / peak rate (the report's buckets).
  const efficiencyBox = document.getElementById('efficiency');
  const SHARE_EDGES = [10, 25, 50, 75];
  const SHARE_NAMES = ['< 10% of peak', '10-25%', '25-50%', '50-75%', '>= 75%'];
  const SHARE_COLORS = ['#c0392b', '#e67e22', '#f1c40f', '#9ccc65', '#2e7d32'];
  function shareBucket(r, k) {
    if (!r.pk || !(r.pk[k] > 0) || !(r.d[k] > 0)) return -1;
    const percent = 100 * r.b[k] / r.d[k] / r.pk[k];
    let b = 0;
    while (b < SHARE_EDGES.length && percent >= SHARE_EDGES[b]) b++;
    return b;
  }
  function eventColor(r, k, pal) {
    if (r.dma && efficiencyBox.checked) {
      const b = shareBucket(r, k);
      return b < 0 ? '#999' : SHARE_COLORS[b];
    }
    return pal[r.o[k]];
  }

  let canvasWidth = 1;
  function plotWidth() { return Math.max(1, canvasWidth - LABEL); }
  function X(t) { return LABEL + (t - t0) / (t1 - t0) * plotWidth(); }
  function T(x) { return t0 + (x - LABEL) / plotWidth() * (t1 - t0); }
  function lowerBound(a, v) {
    let lo = 0, hi = a.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (a[mid] < v) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function fmt(ns) {
    const a = Math.abs(ns);
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
    return ns.toFixed(1) + ' ns';
  }
  function niceStep(span, count) {
    const raw = span / count, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  function height() { return AXIS + rows.length * ROW + counters.length * CROW + 4; }

  function drawAxis(w, h) {
    const step = niceStep(t1 - t0, Math.max(2, Math.floor(plotWidth() / 110)));
    ctx.strokeStyle = '#eee';
    ctx.fillStyle = '#555';
    ctx.textBaseline = 'middle';
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = Math.round(X(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, AXIS - 6); ctx.lineTo(x, h); ctx.stroke();
      ctx.fillText(fmt(t), x + 3, AXIS / 2);
    }
    ctx.strokeStyle = '#ccc';
    ctx.beginPath(); ctx.moveTo(LABEL, AXIS - 0.5); ctx.lineTo(w, AXIS - 0.5); ctx.stroke();
  }

  let lastFill = null;
  function fill(style) { if (style !== lastFill) { ctx.fillStyle = style; lastFill = style; } }
  function drawRow(r, y) {
    const s = r.s, d = r.d, st = r.st, n = s.length, right = LABEL + plotWidth();
    const pal = r.colors || colors, pdense = r.dense || dense, names = r.labels || D.opcodes;
    lastFill = null;
    let k = lowerBound(r.endMax, t0);
    while (k < n && s[k] <= t1) {
      let x0 = X(s[k]), x1 = X(s[k] + d[k]);
      if (x1 - x0 < 1) {
        const px = Math.floor(Math.max(x0, LABEL));
        fill(eventColor(r, k, pdense));
        ctx.fillRect(px, y + 3, 1, ROW - 6);
        k = Math.max(k + 1, lowerBound(s, T(px + 1)) - 1);
        continue;
      }
      const sx = X(s[k] - st[k]);
      if (st[k] > 0 && x0 - sx >= 2) {
        fill(r.dma ? 'rgba(120,120,120,0.35)' : 'rgba(220,70,70,0.45)');
        ctx.fillRect(Math.max(sx, LABEL), y + ROW - 5, Math.min(x0, right) - Math.max(sx, LABEL), 2);
      }
      x0 = Math.max(x0, LABEL);
      x1 = Math.min(x1, right);
      fill(eventColor(r, k, pal));
      ctx.fillRect(x0, y + 3, Math.max(1, x1 - x0 - 0.5), ROW - 8);
      if (x1 - x0 > 48) {
        fill('#fff');
        ctx.fillText(names[r.o[k]], x0 + 3, y + ROW / 2 - 1, x1 - x0 - 6);
      }
      k++;
    }
  }

  function drawCounter(c, y) {
    const t = c.t, v = c.v, n = t.length, right = Math.floor(LABEL + plotWidth());
    ctx.fillStyle = 'rgba(60,120,200,0.55)';
    const first = Math.max(LABEL, Math.floor(X(n ? t[0] : t1)));
    for (let px = first; px < right; px++) {
      const k0 = Math.max(0, lowerBound(t, T(px)) - 1), k1 = Math.max(k0 + 1, lowerBound(t, T(px + 1)));
      if (k0 >= n || t[k0] > t1) break;
      const stride = Math.max(1, Math.floor((k1 - k0) / 64));
      let peak = 0;
      for (let k = k0; k < k1 && k < n; k += stride) peak = Math.max(peak, v[k]);
      if (peak > 0) {
        const hgt = peak / c.max * (CROW - 8);
        ctx.fillRect(px, y + CROW - 4 - hgt, 1, hgt);
      }
    }
  }

  /// Outlines the hovered event and draws an arrow from the event that released it.
  function drawDependency() {
    if (!hovered) return;
    const r = hovered.r, k = hovered.k, y = AXIS + r.row * ROW;
    const x0 = Math.max(X(r.s[k]), LABEL), x1 = Math.max(X(r.s[k] + r.d[k]), x0 + 1);
    ctx.strokeStyle = '#000';
    ctx.lineWidth = 1;
    ctx.strokeRect(x0 - 0.5, y + 2.5, x1 - x0 + 1, ROW - 6);
    const src = r.w[k] >= 0 ? located.get(r.w[k]) : null;
    if (!src) return;
    const sx = Math.max(X(src.r.s[src.k] + src.r.d[src.k]), LABEL), sy = AXIS + src.r.row * ROW + ROW / 2;
    const ex = x0, ey = y + ROW / 2;
    ctx.strokeStyle = '#c0392b';
    ctx.fillStyle = '#c0392b';
    ctx.beginPath(); ctx.moveTo(sx, sy); ctx.lineTo(ex, ey); ctx.stroke();
    const a = Math.atan2(ey - sy, ex - sx);
    ctx.beginPath();
    ctx.moveTo(ex, ey);
    ctx.lineTo(ex - 7 * Math.cos(a - 0.4), ey - 7 * Math.sin(a - 0.4));
    ctx.lineTo(ex - 7 * Math.cos(a + 0.4), ey - 7 * Math.sin(a + 0.4));
    ctx.fill();
  }

  function draw() {
    pending = false;
    const w = canvasWidth, h = height();
    ctx.clearRect(0, 0, w, h);
    ctx.font = '11px system-ui, sans-serif';
    drawAxis(w, h);
    let y = AXIS;
    for (let i = 0; i < rows.length; i++, y += ROW) {
      if (i % 2) { ctx.fillStyle = '#fafafa'; ctx.fillRect(LABEL, y, w - LABEL, ROW); }
      drawRow(rows[i], y);
    }
    for (const c of counters) {
      ctx.fillStyle = '#f4f7fb';
      ctx.fillRect(LABEL, y, w - LABEL, CROW);
      drawCounter(c, y);
      y += CROW;
    }
    drawDependency();
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, LABEL, h);
    ctx.fillStyle = '#333';
    ctx.textBaseline = 'middle';
    y = AXIS;
    for (const r of rows) { ctx.fillText(r.name + ' (' + r.s.length + ')', 6, y + ROW / 2, LABEL - 10); y += ROW; }
    for (const c of counters) {
      ctx.fillText(c.name, 6, y + CROW / 2 - 6, LABEL - 10);
      ctx.fillStyle = '#888';
      ctx.fillText('max ' + +c.max.toPrecision(4), 6, y + CROW / 2 + 7, LABEL - 10);
      ctx.fillStyle = '#333';
      y += CROW;
    }
    ctx.fillText(fmt(t1 - t0) + ' shown', 6, AXIS / 2, LABEL - 10);
  }
  function requestDraw() { if (!pending) { pending = true; requestAnimationFrame(draw); } }

  function resize() {
    const dpr = window.devicePixelRatio || 1, h = height();
    canvas.style.height = h + 'px';
    canvasWidth = Math.max(1, canvas.clientWidth);
    canvas.width = Math.max(1, Math.floor(canvasWidth * dpr));
    canvas.height = Math.max(1, Math.floor(h * dpr));
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    draw();
  }

  function hit(mx, my) {
    const i = Math.floor((my - AXIS) / ROW);
    if (mx < LABEL || i < 0 || i >= rows.length) return null;
    const r = rows[i], t = T(mx), slack = (t1 - t0) / plotWidth() * 3;
    let k = lowerBound(r.endMax, t - slack), best = -1, bestDist = Infinity;
    for (; k < r.s.length && r.s[k] <= t + slack; k++) {
      const dist = t < r.s[k] ? r.s[k] - t : Math.max(0, t - r.s[k] - r.d[k]);
      if (dist < bestDist) { bestDist = dist; best = k; }
    }
    return best >= 0 && bestDist <= slack ? { r: r, k: best } : null;
  }
  /// The value of the counter under the pointer, or null.
  function counterAt(mx, my) {
    const j = Math.floor((my - AXIS - rows.length * ROW) / CROW);
    if (mx < LABEL || j < 0 || j >= counters.length) return null;
    const c = counters[j], t = T(mx), k = lowerBound(c.t, t + 1e-9) - 1;
    return c.name + ' at ' + fmt(t) + ': ' + (k >= 0 ? c.v[k] : 0) + '  (max ' + c.max + ')';
  }

  function describe(r, k) {
    if (r.critical)
      return 'critical path (bound by ' + r.bound + '): ' + r.labels[r.o[k]] + ' owns ' + fmt(r.s[k]) + ' to ' +
             fmt(r.s[k] + r.d[k]) + ' (' + fmt(r.d[k]) + ', ' + r.n[k] + ' pieces)';
    const lines = [
      D.opcodes[r.o[k]] + '  #' + r.i[k] + '  on ' + r.name,
      'start ' + fmt(r.s[k]) + '  end ' + fmt(r.s[k] + r.d[k]) + '  duration ' + fmt(r.d[k]),
    ];
    if (r.st[k] > 0) {
      let why = (r.dma ? 'latency ' : 'stall ') + fmt(r.st[k]) + ' (' + D.causes[r.c[k]];
      if (D.semaphores[r.sem[k]]) why += ' on ' + D.semaphores[r.sem[k]];
      if (r.w[k] >= 0) why += ', released by #' + r.w[k];
      lines.push(why + ')');
    }
    lines.push('bytes ' + r.b[k] + (r.f[k] ? '  flops ' + r.f[k] : ''));
    if (r.dma && r.d[k] > 0) {
      const gbps = r.b[k] / r.d[k];
      let rate = 'achieved ' + gbps.toFixed(1) + ' GB/s';
      if (r.pk[k] > 0) rate += ' of ' + r.pk[k].toFixed(1) + ' GB/s peak (' + (100 * gbps / r.pk[k]).toFixed(1) + '%)';
      lines.push(rate + ', ' + r.bp[k] + ' B per partition');
    }
    if (D.notes[r.nt[k]]) lines.push('phase: ' + D.notes[r.nt[k]]);
    lines.push(D.asm[r.a[k]]);
    return lines.join('\n');
  }

  let drag = null;
  canvas.addEventListener('mousedown', function (e) {
    drag = { x: e.clientX, t0: t0, t1: t1 };
    canvas.classList.add('dragging');
  });
  window.addEventListener('mouseup', function () { drag = null; canvas.classList.remove('dragging'); });
  canvas.addEventListener('mousemove', function (e) {
    const rect = canvas.getBoundingClientRect(), mx = e.clientX - rect.left, my = e.clientY - rect.top;
    if (drag) {
      const dt = (e.clientX - drag.x) / plotWidth() * (drag.t1 - drag.t0);
      t0 = drag.t0 - dt; t1 = drag.t1 - dt;
      tip.style.display = 'none';
      requestDraw();
      return;
    }
    const h = hit(mx, my);
    if ((h ? h.r.row + ':' + h.k : '') !== (hovered ? hovered.r.row + ':' + hovered.k : '')) {
      hovered = h;
      requestDraw();
    }
    const text = h ? describe(h.r, h.k) : counterAt(mx, my);
    if (!text) { tip.style.display = 'none'; return; }
    tip.textContent = text;
    tip.style.display = 'block';
    tip.style.left = Math.min(mx + 14, Math.max(0, canvasWidth - tip.offsetWidth - 4)) + 'px';
    tip.style.top = (my + 16) + 'px';
  });
  canvas.addEventListener('mouseleave', function () {
    tip.style.display = 'none';
    if (hovered) { hovered = null; requestDraw(); }
  });
  canvas.addEventListener('wheel', function (e) {
    e.preventDefault();
    const sideways = e.shiftKey ? e.deltaY || e.deltaX : e.deltaX;
    if (Math.abs(sideways) > Math.abs(e.shiftKey ? 0 : e.deltaY)) {
      const dt = sideways / plotWidth() * (t1 - t0);
      t0 += dt; t1 += dt;
      requestDraw();
      return;
    }
    const rect = canvas.getBoundingClientRect(), tm = T(Math.max(e.clientX - rect.left, LABEL));
    const factor = Math.exp(Math.max(-1, Math.min(1, e.deltaY * 0.002)));
    const span = Math.max(1, (t1 - t0) * factor);
    const frac = (tm - t0) / (t1 - t0);
    t0 = tm - frac * span; t1 = t0 + span;
    requestDraw();
  }, { passive: false });
  canvas.addEventListener('dblclick', function () { t0 = 0; t1 = total; requestDraw(); });
  window.addEventListener('resize', resize);

  document.getElementById('title').textContent = D.title;
  document.title = D.title + ' - neuronsim';
  document.getElementById('summary').textContent = D.summaryText;
  document.getElementById('analysis').textContent = D.analysisText;
  const warnings = document.getElementById('warnings');
  for (const w of D.warnings) {
    const item = document.createElement('li');
    item.textContent = w;
    warnings.appendChild(item);
  }
  const legend = document.getElementById('legend');
  function showLegend() {
    legend.textContent = '';
    const names = efficiencyBox.checked ? SHARE_NAMES : D.opcodes;
    const swatches = efficiencyBox.checked ? SHARE_COLORS : colors;
    names.forEach(function (name, i) {
      const item = document.createElement('span'), sw = document.createElement('i');
      sw.style.background = swatches[i];
      item.appendChild(sw);
      item.appendChild(document.createTextNode(name));
      legend.appendChild(item);
    });
  }
  showLegend();
  efficiencyBox.addEventListener('change', function () { showLegend(); requestDraw(); });
  /// Drives hover, wheel zoom, drag pan and double-click through real DOM events; throws on failure.
  function selfTest() {
    const i = rows.findIndex(function (r) { return r.s.length > 0 && !r.critical; });
    if (i < 0) return 'selftest skipped (no events)';
    const r = rows[i], rect = canvas.getBoundingClientRect();
    const at = function (x, y) { return { clientX: rect.left + x, clientY: rect.top + y, bubbles: true }; };
    const y = AXIS + i * ROW + ROW / 2, x = Math.min(X(r.s[0] + r.d[0] / 2), LABEL + plotWidth() - 1);
    canvas.dispatchEvent(new MouseEvent('mousemove', at(x, y)));
    if (tip.style.display !== 'block' || tip.textContent.indexOf(D.opcodes[r.o[0]]) < 0)
      throw new Error('selftest: hover shows no details');
    const span = t1 - t0;
    canvas.dispatchEvent(new WheelEvent('wheel', Object.assign(at(LABEL + plotWidth() / 2, y), { deltaY: -400 })));
    if (!(t1 - t0 < span * 0.9)) throw new Error('selftest: wheel did not zoom in');
    const before = t0;
    canvas.dispatchEvent(new MouseEvent('mousedown', at(LABEL + 200, y)));
    canvas.dispatchEvent(new MouseEvent('mousemove', at(LABEL + 100, y)));
    window.dispatchEvent(new MouseEvent('mouseup', at(LABEL + 100, y)));
    if (!(t0 > before)) throw new Error('selftest: drag did not pan');
    const dragged = t0, zoomSpan = t1 - t0;
    canvas.dispatchEvent(new WheelEvent('wheel', Object.assign(at(LABEL + 100, y), { deltaY: 100, shiftKey: true })));
    if (!(t0 > dragged) || Math.abs(t1 - t0 - zoomSpan) > 1e-6 * zoomSpan)
      throw new Error('selftest: shift+wheel did not pan');
    canvas.dispatchEvent(new MouseEvent('dblclick', at(LABEL + 100, y)));
    if (t0 !== 0 || t1 !== total) throw new Error('selftest: double-click did not reset');
    efficiencyBox.checked = true;
    efficiencyBox.dispatchEvent(new Event('change'));
    draw();
    if (legend.textContent.indexOf(SHARE_NAMES[0]) < 0) throw new Error('selftest: no efficiency legend');
    efficiencyBox.checked = false;
    efficiencyBox.dispatchEvent(new Event('change'));
    draw();
    return 'selftest passed (hover, zoom, drag, shift+wheel, reset, efficiency view)';
  }

  const began = performance.now();
  resize();
  const firstDraw = performance.now() - began;
  let events = 0;
  for (const r of rows) if (!r.critical) events += r.s.length;
  let text = 'ok: ' + events + ' events on ' + (rows.length - 1) + ' tracks, drawn in ' + firstDraw.toFixed(1) + ' ms';
  if (location.hash === '#bench') {
    let worst = 0;
    for (let step = 0; step < 40; step++) {
      const mid = (t0 + t1) / 2, span = (t1 - t0) * (step < 20 ? 0.6 : 1.0);
      t0 = mid - span / 2 + (step >= 20 ? span * 0.05 : 0);
      t1 = t0 + span;
      const t = performance.now();
      draw();
      worst = Math.max(worst, performance.now() - t);
    }
    text += ', zoom/pan redraw worst ' + worst.toFixed(1) + ' ms';
  }
  if (location.hash === '#selftest') text += ', ' + selfTest();
  setStatus(text, 'ok');
})();
