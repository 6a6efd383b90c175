/* posecards explorer: controls and views. Every number drawn or printed here is computed on
 * the page by window.posecards (math.js, built from the payload Python writes) from the
 * current controls. */
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("explore-data").textContent);
  const P = posecardsMath(DATA.math); // eslint-disable-line no-undef
  window.posecards = P;
  const M = P._internal;
  const $ = (id) => document.getElementById(id);
  const HEAT_MAX_POSITIONS = DATA.limits.heat_positions;
  // device pixels per heatmap column and row at least: fewer beat into false stripes (moiré)
  const HEAT_MIN_COLUMN_PX = DATA.limits.heat_column_px, HEAT_MIN_ROW_PX = DATA.limits.heat_row_px;
  const ATTN_MAX_POSITIONS = DATA.limits.attention_positions;

  // ------------------------------------------------------------------------------------------
  // text: strings from cards/explore.toml, numbers formatted as posecards/formatting.py does
  // ------------------------------------------------------------------------------------------
  let lang = DATA.lang;
  const li = () => DATA.langs.indexOf(lang); // strings are [text in each of DATA.langs]
  const t = (id) => DATA.strings[id][li()];
  function fill(id, values) {
    return t(id).replace(/\{(\w+)\}/g, (_, k) => {
      if (!(k in values)) throw new Error(`string ${id}: no value for {${k}}`);
      return values[k];
    });
  }
  const MINUS = M.MINUS;
  const group = P.group, num = P.num, sig = P.sig;

  // ------------------------------------------------------------------------------------------
  // controls -> state
  // ------------------------------------------------------------------------------------------
  const CONTROL_IDS = [
    "base-exp", "base", "d", "layout", "ctx", "p", "k", "rope-type", "partial", "factor", "orig",
    "beta-fast", "beta-slow", "truncate", "low-ff", "high-ff", "heads", "head", "nb", "md", "bidir",
    "test", "mrope", "mrope-layout", "conv", "seed",
  ];
  function roundSig(x, digits) {
    const e = Math.floor(Math.log10(x));
    const q = Math.pow(10, e - digits + 1);
    return Math.round(x / q) * q;
  }
  function readState() {
    const v = (id) => $(id).value;
    const ctx = Math.round(Math.pow(2, Number(v("ctx"))));
    return {
      base: Number(v("base")),
      d: Number(v("d")),
      layout: v("layout"),
      ctx,
      p: Math.min(Number(v("p")), ctx - 1),
      k: Math.min(Number(v("k")), ctx - 1),
      ropeType: v("rope-type"),
      partial: Number(v("partial")),
      factor: Number(v("factor")),
      orig: Math.round(Math.pow(2, Number(v("orig")))),
      test: Math.round(Math.pow(2, Number(v("test")))),
      betaFast: Number(v("beta-fast")),
      betaSlow: Number(v("beta-slow")),
      truncate: $("truncate").checked,
      lowFF: Number(v("low-ff")),
      highFF: Number(v("high-ff")),
      heads: Number(v("heads")),
      head: Math.min(Number(v("head")), Number(v("heads"))),
      nb: Number(v("nb")),
      md: Number(v("md")),
      bidir: $("bidir").checked,
      mrope: v("mrope"),
      mropeLayout: v("mrope-layout"),
      conv: v("conv"),
      seed: Number(v("seed")),
      // a preset's keys that no control holds (mscale, mscale_all_dim, ...) and its module's rule
      extra: preset ? presetExtra(preset) : {},
      partialInDefault: preset ? preset.partial_in_default : true,
    };
  }

  // ------------------------------------------------------------------------------------------
  // presets: a published model's rope_parameters as posecards reads them (render/explore.presets)
  // ------------------------------------------------------------------------------------------
  const PRESETS = Object.fromEntries(DATA.presets.map((p) => [p.id, p]));
  // rope_parameters keys a control holds, and how to set it (and read it back) from a value
  const HELD = {
    rope_type: ["rope-type", (v) => v, (s) => s.ropeType],
    rope_theta: ["base", (v) => v, (s) => s.base],
    partial_rotary_factor: ["partial", (v) => v, (s) => s.partial],
    factor: ["factor", (v) => v, (s) => s.factor],
    original_max_position_embeddings: ["orig", (v) => Math.log2(v), (s) => s.orig],
    beta_fast: ["beta-fast", (v) => v, (s) => s.betaFast],
    beta_slow: ["beta-slow", (v) => v, (s) => s.betaSlow],
    low_freq_factor: ["low-ff", (v) => v, (s) => s.lowFF],
    high_freq_factor: ["high-ff", (v) => v, (s) => s.highFF],
  };
  const PRESET_CONTROLS = ["base-exp", "base", "d", "layout", "rope-type", "partial", "factor",
    "orig", "beta-fast", "beta-slow", "truncate", "low-ff", "high-ff"];
  let preset = null;
  function presetExtra(p) {
    const out = {};
    for (const [k, v] of Object.entries(p.parameters)) {
      if (!(k in HELD) && !["type", "truncate"].includes(k)) out[k] = v;
    }
    return out;
  }
  function presetLabel(p) {
    return t(p.model) + (p.kind === "k_rope" ? "" : " · " + t(p.kind));
  }
  function presetNote() {
    const el = $("preset-note");
    if (!preset) {
      el.textContent = t("preset_own_note");
      return;
    }
    const keys = [`head_dim ${preset.head_dim}`, ...Object.entries(preset.parameters).map(([k, v]) => `${k} ${v}`),
      `${t("c_layout")} ${preset.layout}`];
    let text = fill("preset_note", { model: presetLabel(preset), source: preset.source, keys: keys.join(", ") });
    const s = readState();
    const off = Object.entries(preset.parameters).filter(([k, v]) => k in HELD && HELD[k][2](s) !== v).map(([k]) => k);
    if (s.d !== preset.head_dim) off.push("head_dim");
    if (off.length) text += " " + fill("preset_inexact", { keys: off.join(", ") });
    el.textContent = text;
  }
  function applyPreset(id) {
    preset = PRESETS[id] || null;
    if (preset) {
      const pr = preset.parameters;
      for (const [k, [ctl, toValue]] of Object.entries(HELD)) if (k in pr) $(ctl).value = String(toValue(pr[k]));
      // keys the config leaves out: what transformers then uses (no factor: 1; YaRN's betas)
      if (!("partial_rotary_factor" in pr)) $("partial").value = "1";
      if (!("factor" in pr)) $("factor").value = "1";
      if (!("beta_fast" in pr)) $("beta-fast").value = String(DATA.math.yarn_defaults.beta_fast);
      if (!("beta_slow" in pr)) $("beta-slow").value = String(DATA.math.yarn_defaults.beta_slow);
      $("rope-type").value = pr.rope_type || pr.type || "default";
      $("base-exp").value = String(Math.log10(pr.rope_theta));
      $("d").value = String(preset.head_dim);
      $("layout").value = preset.layout;
      $("truncate").checked = "truncate" in pr ? Boolean(pr.truncate) : true;
    }
    update();
    presetNote();
  }

  /** The Hugging Face rope_parameters dict (head_inv_freq's) and the call the views make. */
  function ropeCall(s) {
    const sc = { ...s.extra, rope_type: s.ropeType, rope_theta: s.base };
    if (s.partial !== 1 || s.ropeType === "proportional") sc.partial_rotary_factor = s.partial;
    if (s.ropeType !== "default") sc.factor = s.factor;
    if (["yarn", "longrope", "llama3"].includes(s.ropeType)) sc.original_max_position_embeddings = s.orig;
    if (s.ropeType === "yarn") {
      sc.beta_fast = s.betaFast;
      sc.beta_slow = s.betaSlow;
      sc.truncate = s.truncate;
    }
    if (s.ropeType === "llama3") {
      sc.low_freq_factor = s.lowFF;
      sc.high_freq_factor = s.highFF;
    }
    if (s.ropeType === "longrope") {
      // short factors 1; long factors rise geometrically from 1 (fastest pair) to the factor
      const half = Math.trunc(s.d * s.partial) / 2;
      sc.short_factor = Array.from({ length: half }, () => 1.0);
      sc.long_factor = Array.from({ length: half }, (_, i) => Math.pow(s.factor, half > 1 ? i / (half - 1) : 1));
    }
    const seqLen = ["dynamic", "longrope"].includes(s.ropeType) ? s.ctx : null;
    const mpe = s.ropeType === "dynamic" ? s.orig : null;
    return { scaling: sc, seqLen, mpe, partialInDefault: s.partialInDefault };
  }

  function syncControls() {
    // visible parameters of the chosen scaling type; ranges that depend on other controls
    const rt = $("rope-type").value;
    const show = {
      factor: rt !== "default",
      orig: true, // the RoPE view's training length, whatever the scaling
      "beta-fast": rt === "yarn",
      "beta-slow": rt === "yarn",
      truncate: rt === "yarn",
      "low-ff": rt === "llama3",
      "high-ff": rt === "llama3",
    };
    for (const [id, on] of Object.entries(show)) $(id).closest(".ctl").hidden = !on;
    const ctx = Math.round(Math.pow(2, Number($("ctx").value)));
    for (const id of ["p", "k"]) {
      $(id).max = String(ctx - 1);
      if (Number($(id).value) > ctx - 1) $(id).value = String(ctx - 1);
    }
    $("head").max = $("heads").value;
    if (Number($("head").value) > Number($("heads").value)) $("head").value = $("heads").value;
  }

  function writeOutputs(s) {
    const out = (id, text) => ($(id + "-out").textContent = text);
    out("base-exp", group(s.base));
    out("d", String(s.d));
    out("ctx", group(s.ctx));
    out("p", group(s.p));
    out("k", group(s.k));
    out("partial", num(s.partial, 2));
    out("factor", sig(s.factor));
    out("orig", group(s.orig));
    out("test", group(s.test));
    out("beta-fast", sig(s.betaFast));
    out("beta-slow", sig(s.betaSlow));
    out("low-ff", sig(s.lowFF));
    out("high-ff", sig(s.highFF));
    out("heads", String(s.heads));
    out("head", String(s.head));
    out("nb", String(s.nb));
    out("md", group(s.md));
    out("seed", String(s.seed));
  }

  // ------------------------------------------------------------------------------------------
  // drawing kit
  // ------------------------------------------------------------------------------------------
  let colors = {};
  function readColors() {
    const cs = getComputedStyle(document.body);
    const c = (name) => cs.getPropertyValue(name).trim();
    colors = {
      text: c("--text"), muted: c("--muted"), edge: c("--edge"), bg: c("--bg"), accent: c("--accent"),
      warn: c("--warn"), ok: c("--ok"), neg: hexRGB(c("--map-neg")), mid: hexRGB(c("--map-mid")),
      pos: hexRGB(c("--map-pos")),
    };
  }
  function hexRGB(h) {
    const x = parseInt(h.replace("#", ""), 16);
    return [(x >> 16) & 255, (x >> 8) & 255, x & 255];
  }
  /** diverging colour of v in [-1, 1] */
  function divColor(v, out, o) {
    const a = v < 0 ? colors.neg : colors.pos;
    const w = Math.min(1, Math.abs(v));
    const m = colors.mid;
    out[o] = m[0] + (a[0] - m[0]) * w;
    out[o + 1] = m[1] + (a[1] - m[1]) * w;
    out[o + 2] = m[2] + (a[2] - m[2]) * w;
    out[o + 3] = 255;
  }

  // every canvas text: 18 px, the least a room reads at 1920 × 1080 (tests/test_explore.py);
  // 14 px on a phone (explore.css's 900 px), whose canvases are a hand's width
  const PHONE = matchMedia("(max-width: 900px)");
  const font = () => (PHONE.matches ? 14 : 18) + "px system-ui, 'Noto Sans CJK SC', sans-serif";
  const sizes = new Map(); // canvas -> {w, h, dpr}: measured once, and again on resize only
  function measure() {
    // read every width first (one layout), then size the canvases
    const all = [...document.querySelectorAll("canvas")];
    const widths = all.map((cv) => Math.max(200, Math.floor(cv.parentElement.clientWidth)));
    const dpr = window.devicePixelRatio || 1;
    all.forEach((cv, i) => {
      const w = widths[i];
      const narrow = w < 520 && cv.dataset.aspectNarrow;
      const h = Math.round(w * Number(narrow || cv.dataset.aspect || 0.6));
      const old = sizes.get(cv);
      if (!old || old.w !== w || old.h !== h || old.dpr !== dpr) {
        cv.width = Math.round(w * dpr);
        cv.height = Math.round(h * dpr);
        cv.style.height = h + "px";
        sizes.set(cv, { w, h, dpr });
      }
    });
  }
  /** The canvas cleared, with a 2-D context in CSS pixels (no layout is read here). */
  // values on hover: every line drawn on a canvas (polyline) is kept with its scale, and the
  // values nearest the pointer are shown beside it
  const traces = new Map(); // canvas -> {axes: [x label, y label], lines: [{xs, ys, X, color}]}
  function surface(cv) {
    traces.set(cv, { axes: ["", ""], lines: [] });
    const { w, h, dpr } = sizes.get(cv);
    const g = cv.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    return { g, w, h, dpr };
  }

  function niceTicks(a, b, maxTicks) {
    const lo = Math.min(a, b), hi = Math.max(a, b);
    const span = hi - lo;
    if (!(span > 0)) return [lo];
    const raw = span / Math.max(1, maxTicks);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    return out;
  }
  function logTicks(lo, hi, maxTicks) {
    const a = Math.ceil(Math.log10(lo) - 1e-9), b = Math.floor(Math.log10(hi) + 1e-9);
    const every = Math.max(1, Math.ceil((b - a + 1) / Math.max(1, maxTicks)));
    const out = [];
    for (let e = a; e <= b; e += every) {
      const v = Math.pow(10, e);
      if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
    }
    return out;
  }
  function tickLabel(v, log) {
    if (log) {
      const e = Math.round(Math.log10(v));
      if (e >= 0 && e <= 3) return group(v);
      const sup = String(e).replace("-", "⁻").replace(/\d/g, (d) => "⁰¹²³⁴⁵⁶⁷⁸⁹"[d]);
      return "10" + sup;
    }
    return Math.abs(v) >= 1000 ? group(v) : String(Number(v.toPrecision(6))).replace("-", MINUS);
  }

  /** A plot frame: scales, ticks, axis labels. x/y: {lo, hi, log, label}. */
  function frame(sf, x, y, opt = {}) {
    const { g, w, h } = sf;
    const right = opt.right ?? 14, top = opt.top ?? 10, bottom = opt.bottom ?? 50;
    // the left margin fits the widest y tick label beside the rotated axis label
    const ny = Math.max(3, Math.floor((h - top - bottom) / 40));
    const yTicks = y.log ? logTicks(y.lo, y.hi, ny) : niceTicks(y.lo, y.hi, ny);
    g.font = font();
    const widest = Math.max(0, ...yTicks.map((v) => g.measureText(tickLabel(v, y.log)).width));
    const left = opt.left ?? Math.ceil(widest + 36);
    const box = { x0: left, x1: w - right, y0: top, y1: h - bottom };
    const tr = (ax, a, b) => {
      if (ax.log) {
        const l0 = Math.log10(ax.lo), l1 = Math.log10(ax.hi);
        return (v) => a + ((Math.log10(v) - l0) / (l1 - l0)) * (b - a);
      }
      return (v) => a + ((v - ax.lo) / (ax.hi - ax.lo)) * (b - a);
    };
    const X = tr(x, box.x0, box.x1), Y = tr(y, box.y1, box.y0);
    g.strokeStyle = colors.edge;
    g.lineWidth = 1;
    g.strokeRect(box.x0 + 0.5, box.y0 + 0.5, box.x1 - box.x0, box.y1 - box.y0);
    g.fillStyle = colors.muted;
    g.font = font();
    const nx = Math.max(2, Math.floor((box.x1 - box.x0) / 80));
    g.textAlign = "center";
    g.textBaseline = "top";
    let lastRight = -Infinity;
    for (const v of x.log ? logTicks(x.lo, x.hi, nx) : niceTicks(x.lo, x.hi, nx)) {
      const px = X(v), label = tickLabel(v, x.log), tw = g.measureText(label).width;
      if (px - tw / 2 < lastRight + 6 || px + tw / 2 > sf.w) continue;
      g.fillRect(px, box.y1, 1, 4);
      g.fillText(label, px, box.y1 + 6);
      lastRight = px + tw / 2;
    }
    g.textAlign = "right";
    g.textBaseline = "middle";
    for (const v of yTicks) {
      const py = Y(v);
      g.fillRect(box.x0 - 4, py, 4, 1);
      g.fillText(tickLabel(v, y.log), box.x0 - 6, py);
    }
    g.font = font();
    g.fillStyle = colors.text;
    g.textAlign = "center";
    g.textBaseline = "bottom";
    if (x.label) g.fillText(x.label, (box.x0 + box.x1) / 2, h - 2);
    const trace = traces.get(g.canvas);
    if (trace) trace.axes = [x.label || "x", y.label || "y"];
    if (y.label) {
      g.save();
      g.translate(12, (box.y0 + box.y1) / 2);
      g.rotate(-Math.PI / 2);
      g.textBaseline = "middle";
      g.fillText(y.label, 0, 0);
      g.restore();
    }
    return { box, X, Y };
  }
  function clip(g, box) {
    g.save();
    g.beginPath();
    g.rect(box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0);
    g.clip();
  }
  function polyline(g, xs, ys, X, Y, color, width = 2, dash = []) {
    const tr = traces.get(g.canvas);
    if (tr) tr.lines.push({ xs, ys, X, color });
    g.strokeStyle = color;
    g.lineWidth = width;
    g.setLineDash(dash);
    g.beginPath();
    for (let i = 0; i < xs.length; i++) {
      const px = X(xs[i]), py = Y(ys[i]);
      if (i === 0) g.moveTo(px, py);
      else g.lineTo(px, py);
    }
    g.stroke();
    g.setLineDash([]);
  }
  /** filled dots of one colour at (X(x), Y(y)), one path for all (one fill, not one per dot) */
  function dots(g, xs, ys, X, Y, r, color) {
    g.fillStyle = color;
    g.beginPath();
    for (let k = 0; k < xs.length; k++) {
      const px = X(xs[k]), py = Y(ys[k]);
      g.moveTo(px + r, py);
      g.arc(px, py, r, 0, 2 * Math.PI);
    }
    g.fill();
  }
  function label(g, text, x, y, color, align = "left", base = "bottom") {
    g.font = font();
    g.textAlign = align;
    g.textBaseline = base;
    const w = g.measureText(text).width;
    const x0 = align === "left" ? x : align === "right" ? x - w : x - w / 2;
    g.fillStyle = colors.bg;
    g.globalAlpha = 0.85;
    const hgt = 22, y0 = base === "bottom" ? y - hgt : base === "top" ? y : y - hgt / 2;
    g.fillRect(x0 - 2, y0, w + 4, hgt);
    g.globalAlpha = 1;
    g.fillStyle = color;
    g.fillText(text, x, y);
  }

  function showError(el, e) {
    el.classList.add("error");
    el.textContent = `${e.name}: ${e.message}`;
  }
  function readout(el, html) {
    el.classList.remove("error");
    el.textContent = html;
  }

  // ------------------------------------------------------------------------------------------
  // views: each declares the state keys it depends on
  // ------------------------------------------------------------------------------------------
  const views = [];
  function view(id, deps, draw) {
    views.push({ id, deps, draw, last: null });
  }

  // the heatmap's and profile's table (math.js's peTable), kept while its inputs stay
  let table = null;
  function peTable(d, base, n, rows) {
    const key = `${d}|${base}|${n}|${rows.join(",")}`;
    if (!table || table.key !== key) table = { key, ...M.peTable(d, base, n, rows) };
    return table;
  }
  let lut = null;
  function colorLUT() {
    // 1024 steps of the diverging map as packed RGBA (little-endian ABGR words)
    const key = colors.neg + colors.mid + colors.pos;
    if (lut && lut.key === key) return lut.words;
    const words = new Uint32Array(1024);
    const px = new Uint8ClampedArray(4);
    for (let j = 0; j < 1024; j++) {
      divColor((j / 1023) * 2 - 1, px, 0);
      words[j] = (255 << 24) | (px[2] << 16) | (px[1] << 8) | px[0];
    }
    lut = { key, words };
    return words;
  }

  /** at most `most` integers 0..n-1, evenly spread, both ends */
  function spreadInts(n, most) {
    const m = Math.min(n, most);
    if (m <= 1) return [0];
    const out = [];
    for (let k = 0; k < m; k++) {
      const v = Math.round((k * (n - 1)) / (m - 1));
      if (out.length === 0 || out[out.length - 1] !== v) out.push(v);
    }
    return out;
  }

  /** the first positions, at most one per HEAT_MIN_ROW_PX (every k-th would alias fast pairs) */
  function heatShown(n, ph) {
    return Math.max(1, Math.min(n, Math.floor(ph / HEAT_MIN_ROW_PX)));
  }
  /** the position under the centre of each pixel row of the heatmap */
  function heatRows(n, ph) {
    const m = heatShown(n, ph);
    return Array.from({ length: ph }, (_, r) => Math.min(m - 1, Math.floor(((r + 0.5) * m) / ph)));
  }
  function heatPixelRows() {
    const { h, dpr } = sizes.get($("cv-heat"));
    return Math.max(1, Math.round((h - 10 - 44 - 1) * dpr)); // the frame's box height
  }

  let heatImg = null;
  /** the heatmap's pixels: each device pixel shows the table cell under its centre */
  function fillHeat(img, pe, d, layout) {
    const pw = img.width, ph = img.height, half = d / 2;
    // pairs shown: evenly spread, both ends, at most one column per HEAT_MIN_COLUMN_PX (moiré)
    const pairs = spreadInts(half, Math.max(1, Math.floor(pw / (2 * HEAT_MIN_COLUMN_PX))));
    const np = pairs.length, cols = 2 * np;
    // pixel column -> (pair, sin|cos) by layout
    const src = new Int32Array(pw); // pixel column -> column of the (sin 2i, cos 2i+1) table
    for (let c = 0; c < pw; c++) {
      const k = Math.min(cols - 1, Math.floor(((c + 0.5) * cols) / pw)); // shown column
      src[c] = layout === "interleaved"
        ? 2 * pairs[k >> 1] + (k & 1)
        : 2 * pairs[k % np] + (k >= np ? 1 : 0);
    }
    const words = new Uint32Array(img.data.buffer);
    const cmap = colorLUT();
    for (let r = 0; r < ph; r++) {
      const o = r * pw, row = r * d;
      for (let c = 0; c < pw; c++) words[o + c] = cmap[((pe[row + src[c]] + 1) * 511.5 + 0.5) | 0];
    }
    heatImg.cols = cols;
    heatImg.src = src;
  }
  view("heat", ["base", "d", "layout", "ctx", "p"], (s) => {
    const cv = $("cv-heat"), sf = surface(cv), g = sf.g;
    const n = Math.min(s.ctx, HEAT_MAX_POSITIONS);
    const m = heatShown(n, heatPixelRows()); // the first m positions are drawn
    const fr = frame(sf, { lo: 0, hi: s.d, label: t("ax_dimension") }, { lo: m, hi: 0, label: t("ax_position") });
    const { box } = fr;
    const dpr = sf.dpr;
    const pw = Math.max(1, Math.round((box.x1 - box.x0 - 1) * dpr));
    const ph = Math.max(1, Math.round((box.y1 - box.y0 - 1) * dpr));
    const rowPos = heatRows(n, ph);
    const tab = peTable(s.d, s.base, n, rowPos);
    // one ImageData per size, refilled only when what it shows changes (a move of p keeps it)
    colorLUT();
    const imgKey = `${tab.key}|${s.layout}|${pw}|${ph}|${lut.key}`;
    if (!heatImg || heatImg.key !== imgKey) {
      if (!heatImg || heatImg.img.width !== pw || heatImg.img.height !== ph) heatImg = { img: g.createImageData(pw, ph) };
      heatImg.key = imgKey;
      fillHeat(heatImg.img, tab.pe, s.d, s.layout);
    }
    const img = heatImg.img;
    const cols = heatImg.cols, half = s.d / 2;
    // hover: the table cell under the pointer (position, dimension, its value)
    traces.get(cv).pick = (x, y) => {
      const c = Math.floor((x - box.x0 - 1) * dpr), r = Math.floor((y - box.y0 - 1) * dpr);
      if (c < 0 || c >= pw || r < 0 || r >= ph) return null;
      const col = heatImg.src[c], i = col >> 1, cos = col & 1; // (sin 2i, cos 2i+1) table column
      const dim = s.layout === "interleaved" ? col : i + (cos ? half : 0);
      return [fill("hover_heat", { p: group(rowPos[r]), dim: String(dim), i: String(i), fn: cos ? "cos" : "sin",
        v: num(tab.pe[r * s.d + col], 4) })];
    };
    g.putImageData(img, Math.round((box.x0 + 1) * dpr), Math.round((box.y0 + 1) * dpr));
    if (s.p < m) {
      const y = fr.Y(s.p + 0.5);
      g.strokeStyle = colors.text;
      g.lineWidth = 2;
      g.beginPath();
      g.moveTo(box.x0, y);
      g.lineTo(box.x1, y);
      g.stroke();
    }
    const row = P.sinusoidalPE([s.p], s.d, s.base, s.layout)[0];
    const last = s.layout === "interleaved" ? [row[s.d - 2], row[s.d - 1]] : [row[half - 1], row[s.d - 1]];
    readout($("ro-heat"), fill("heat_readout", {
      n: group(m), ctx: group(s.ctx), cols: group(cols), d: group(s.d), p: group(s.p), s0: num(row[0], 4),
      c0: num(s.layout === "interleaved" ? row[1] : row[half], 4), sl: num(last[0], 4), cl: num(last[1], 4),
      last: String(half - 1),
    }));
    cv.setAttribute("aria-label", t("heat_title"));
  });

  view("sim", ["base", "d", "ctx", "k"], (s) => {
    const cv = $("cv-sim"), sf = surface(cv), g = sf.g;
    const n = Math.min(s.ctx, HEAT_MAX_POSITIONS);
    // f(k) = mean_i cos(k·ω_i) for every whole offset 0..n-1, from the drawing table
    const tab = peTable(s.d, s.base, n, heatRows(n, heatPixelRows()));
    const ks = new Array(n), f = new Array(n);
    for (let k = 0; k < n; k++) {
      ks[k] = k;
      f[k] = tab.fsum[k] / tab.half;
    }
    let lo = f.reduce((a, b) => Math.min(a, b), 1);
    lo = Math.min(-0.2, Math.floor(lo * 10) / 10);
    const fr = frame(sf, { lo: 0, hi: n - 1 || 1, label: t("ax_offset") }, { lo, hi: 1, label: t("ax_similarity") });
    clip(g, fr.box);
    g.strokeStyle = colors.edge;
    g.beginPath();
    g.moveTo(fr.box.x0, fr.Y(0));
    g.lineTo(fr.box.x1, fr.Y(0));
    g.stroke();
    polyline(g, ks, f, fr.X, fr.Y, colors.accent, 1.5);
    const fk = P.offsetProfile([s.k], s.d, s.base)[0];
    if (s.k < n) {
      g.fillStyle = colors.warn;
      g.beginPath();
      g.arc(fr.X(s.k), fr.Y(fk), 5, 0, 2 * Math.PI);
      g.fill();
    }
    g.restore();
    readout($("ro-sim"), fill("sim_readout", { k: group(s.k), fk: num(fk, 4), d: String(s.d), base: group(s.base) }));
    cv.setAttribute("aria-label", t("sim_title"));
  });

  view("clocks", ["base", "d", "p"], (s) => {
    const cv = $("cv-clocks"), sf = surface(cv), g = sf.g;
    const omega = M.pairFrequencies(s.d, s.base);
    const half = omega.length;
    const perRow = sf.w < 520 ? 3 : 6;
    const count = Math.min(half, perRow * 2);
    const rows = Math.ceil(count / perRow);
    const cw = sf.w / perRow, ch = sf.h / rows;
    const rad = Math.min(cw, ch - 52) / 2 - 6;
    const lam = P.wavelengths(s.d, s.base);
    for (let j = 0; j < count; j++) {
      const i = count === 1 ? 0 : Math.round((j * (half - 1)) / (count - 1));
      const cx = (j % perRow) * cw + cw / 2, cy = Math.floor(j / perRow) * ch + 6 + rad;
      const angle = s.p * omega[i];
      g.strokeStyle = colors.edge;
      g.lineWidth = 1.5;
      g.beginPath();
      g.arc(cx, cy, rad, 0, 2 * Math.PI);
      g.stroke();
      // the hand: angle p·ω_i, counter-clockwise from 3 o'clock; (cos, sin) is the pair's value
      g.strokeStyle = colors.accent;
      g.lineWidth = 3;
      g.beginPath();
      g.moveTo(cx, cy);
      g.lineTo(cx + rad * Math.cos(angle), cy - rad * Math.sin(angle));
      g.stroke();
      g.fillStyle = colors.text;
      g.font = font();
      g.textAlign = "center";
      g.textBaseline = "top";
      g.fillText(`i = ${i}`, cx, cy + rad + 4);
      g.fillStyle = colors.muted;
      g.fillText(`λ = ${sig(lam[i])}`, cx, cy + rad + 24);
    }
    // hover: the clock under the pointer, its angle p·ωᵢ and (sin, cos)
    traces.get(cv).pick = (x, y) => {
      const j = Math.floor(y / ch) * perRow + Math.floor(x / cw);
      if (j < 0 || j >= count) return null;
      const i = count === 1 ? 0 : Math.round((j * (half - 1)) / (count - 1)), a = s.p * omega[i];
      return [fill("hover_clock", { i: String(i), p: group(s.p), a: sig(a, 4), turns: sig(a / (2 * Math.PI), 4),
        sin: num(Math.sin(a), 4), cos: num(Math.cos(a), 4) })];
    };
    readout($("ro-clocks"), fill("clocks_readout", {
      p: group(s.p), t0: sig(s.p / lam[0]), last: String(half - 1), tl: sig(s.p / lam[half - 1]),
    }));
    cv.setAttribute("aria-label", t("clocks_title"));
  });

  view("ladder", ["base", "d", "ctx", "rope"], (s) => {
    const cv = $("cv-ladder"), sf = surface(cv), g = sf.g;
    const lam = P.wavelengths(s.d, s.base);
    const half = lam.length;
    let scaled = null, err = null;
    if (s.ropeType !== "default" || s.partial !== 1) {
      const c = ropeCall(s);
      try {
        // head_inv_freq: the rotated pairs only (partial), zeros for pairs that never turn
        scaled = P.headInvFreq(s.d, c.scaling, c.mpe, c.seqLen, c.partialInDefault).invFreq.filter((w) => w > 0).map((w) => (2 * Math.PI) / w);
      } catch (e) {
        err = e;
      }
    }
    const all = lam.concat(scaled || [], [s.ctx]);
    const fr = frame(sf, { lo: -0.5, hi: half - 0.5, label: t("ax_pair") }, {
      lo: Math.min(...all) / 1.5, hi: Math.max(...all) * 1.5, log: true, label: t("ax_wavelength"),
    });
    clip(g, fr.box);
    g.strokeStyle = colors.warn;
    g.lineWidth = 2;
    g.setLineDash([6, 4]);
    g.beginPath();
    g.moveTo(fr.box.x0, fr.Y(s.ctx));
    g.lineTo(fr.box.x1, fr.Y(s.ctx));
    g.stroke();
    g.setLineDash([]);
    const r = Math.max(1.5, Math.min(4, (fr.box.x1 - fr.box.x0) / half / 2.5));
    let turn = 0;
    const idx = lam.map((_, i) => i), inCtx = idx.filter((i) => lam[i] <= s.ctx);
    turn = inCtx.length;
    dots(g, inCtx, inCtx.map((i) => lam[i]), fr.X, fr.Y, r, colors.accent);
    const rest = idx.filter((i) => lam[i] > s.ctx);
    dots(g, rest, rest.map((i) => lam[i]), fr.X, fr.Y, r, colors.muted);
    let turnScaled = 0;
    if (scaled) {
      for (let i = 0; i < scaled.length; i++) turnScaled += scaled[i] <= s.ctx;
      polyline(g, scaled.map((_, i) => i), scaled, fr.X, fr.Y, colors.ok, 2.5);
    }
    g.restore();
    // the context label above its line on the left (short wavelengths lie below it there), the
    // legend in the lower right corner (long wavelengths lie above it there)
    label(g, fill("ladder_ctx_label", { ctx: group(s.ctx) }), fr.box.x0 + 6, fr.Y(s.ctx) - 3, colors.warn, "left", "bottom");
    const legendY = fr.box.y1 - 4;
    if (scaled) label(g, fill("ladder_legend_scaled", { type: s.ropeType }), fr.box.x1 - 6, legendY, colors.ok, "right", "bottom");
    label(g, t("ladder_legend_turn"), fr.box.x1 - 6, scaled ? legendY - 24 : legendY, colors.accent, "right", "bottom");
    let text = fill("ladder_readout", { turn: String(turn), pairs: String(half), ctx: group(s.ctx), longest: sig(lam[half - 1]) });
    if (scaled) text += " " + fill("ladder_scaled", { type: s.ropeType, turn: String(turnScaled) });
    if (scaled && scaled.length < half) text += " " + fill("ladder_rotating", { n: String(scaled.length), pairs: String(half) });
    readout($("ro-ladder"), text);
    if (err) showError($("ro-ladder"), err);
    cv.setAttribute("aria-label", t("ladder_title"));
  });

  view("scaling", ["base", "d", "ctx", "rope"], (s) => {
    const cv = $("cv-scaling"), sf = surface(cv), g = sf.g;
    const c = ropeCall(s);
    const shown = { ...c.scaling };
    if (shown.short_factor) {
      shown.short_factor = `[1.0 × ${s.d / 2}]`;
      shown.long_factor = `[1 … ${sig(s.factor)}, ${s.d / 2}]`;
    }
    const args = [String(s.d), JSON.stringify(shown).replace(/"(\[[^\]]*\])"/g, "$1")];
    if (c.mpe !== null) args.push(`max_position_embeddings=${c.mpe}`);
    if (c.seqLen !== null) args.push(`seq_len=${c.seqLen}`);
    if (!c.partialInDefault) args.push("partial_in_default=False");
    $("call-scaling").textContent = `head_inv_freq(${args.join(", ")})`;
    let res, base;
    try {
      res = P.headInvFreq(s.d, c.scaling, c.mpe, c.seqLen, c.partialInDefault);
      // unscaled: the same rotated pairs (proportional: the whole head's ladder)
      const p = s.ropeType === "proportional" ? 1 : s.partial;
      base = P.headInvFreq(s.d, { rope_type: "default", rope_theta: s.base, partial_rotary_factor: p }).invFreq;
    } catch (e) {
      frame(sf, { lo: 1, hi: 10, log: true }, { lo: 0.1, hi: 1, log: true });
      showError($("ro-scaling"), e);
      return;
    }
    const still = res.invFreq.filter((w) => w === 0).length; // proportional: never turn
    const lam = base.slice(0, res.invFreq.length - still).map((w) => (2 * Math.PI) / w);
    const ratio = lam.map((_, i) => res.invFreq[i] / base[i]);
    const lo = Math.min(...ratio), hi = Math.max(...ratio);
    const fr = frame(sf, { lo: Math.min(...lam) / 1.3, hi: Math.max(...lam, s.orig) * 1.3, log: true, label: t("ax_orig_wavelength") }, {
      lo: Math.min(lo, 0.5) / 1.5, hi: Math.max(hi, 1) * 1.5, log: true, label: t("ax_ratio"),
    });
    clip(g, fr.box);
    if (["dynamic", "yarn", "longrope", "llama3"].includes(s.ropeType)) {
      g.strokeStyle = colors.warn;
      g.setLineDash([6, 4]);
      g.lineWidth = 2;
      g.beginPath();
      g.moveTo(fr.X(s.orig), fr.box.y0);
      g.lineTo(fr.X(s.orig), fr.box.y1);
      g.stroke();
      g.setLineDash([]);
    }
    polyline(g, lam, ratio, fr.X, fr.Y, colors.accent, 2);
    g.restore();
    if (["dynamic", "yarn", "longrope", "llama3"].includes(s.ropeType)) {
      label(g, fill("scaling_orig_label", { orig: group(s.orig) }), fr.X(s.orig) - 6, fr.box.y0 + 4, colors.warn, "right", "top");
    }
    const kept = ratio.filter((r) => r === 1).length;
    let text = fill("scaling_readout", {
      af: num(res.attentionFactor, 4), af2: num(res.attentionFactor * res.attentionFactor, 4), hi: sig(ratio[0], 4), lo: sig(ratio[ratio.length - 1], 4),
      kept: String(kept), pairs: String(ratio.length),
    });
    if (still) text += " " + fill("scaling_still", { n: String(still) });
    readout($("ro-scaling"), text);
    cv.setAttribute("aria-label", t("scaling_title"));
  });

  // RoPE: q and k turning, the score against distance, the angles never seen in training
  let ropeDrawn = "";
  view("rope", ["base", "d", "p", "k", "orig", "test", "rope"], (s) => {
    const c = ropeCall(s);
    let res, plain;
    try {
      res = P.headInvFreq(s.d, c.scaling, c.mpe, c.seqLen, c.partialInDefault);
      // the training frequencies: the same rotated pairs, no scaling
      const p = s.ropeType === "proportional" ? 1 : s.partial;
      plain = P.headInvFreq(s.d, { rope_type: "default", rope_theta: s.base, partial_rotary_factor: p }).invFreq;
    } catch (e) {
      showError($("ro-rope"), e);
      return;
    }
    const n = plain.length; // turning pairs (proportional: the rest has frequency 0)
    const theta = res.invFreq.slice(0, n); // (pairs,) scaled
    const af2 = res.attentionFactor * res.attentionFactor;
    const typeName = s.ropeType === "default" ? "default" : `${s.ropeType} ×${sig(s.factor)}`;
    // q at m = p + k and k at n = p: three pairs (fastest, middle, slowest)
    {
      const cv = $("cv-turn"), sf = surface(cv), g = sf.g;
      const m = s.p + s.k, pairs = [0, Math.floor((n - 1) / 2), n - 1];
      const cw = sf.w / 3, rad = Math.min(cw / 2 - 10, (sf.h - 56) / 2 - 6);
      pairs.forEach((i, j) => {
        const cx = j * cw + cw / 2, cy = 6 + rad;
        g.strokeStyle = colors.edge;
        g.lineWidth = 1.5;
        g.beginPath();
        g.arc(cx, cy, rad, 0, 2 * Math.PI);
        g.stroke();
        for (const [pos, color] of [[m, colors.accent], [s.p, colors.warn]]) {
          const a = pos * theta[i];
          g.strokeStyle = color;
          g.lineWidth = 3;
          g.beginPath();
          g.moveTo(cx, cy);
          g.lineTo(cx + rad * Math.cos(a), cy - rad * Math.sin(a));
          g.stroke();
        }
        const rel = (s.k * theta[i]) % (2 * Math.PI);
        g.font = font();
        g.textAlign = "center";
        g.textBaseline = "top";
        g.fillStyle = colors.text;
        g.fillText(fill("rope_clock", { i: String(i) }), cx, cy + rad + 6);
        g.fillText(fill("rope_clock_angle", { a: num(rel, 2) }), cx, cy + rad + 28);
      });
      label(g, "q", 6, 22, colors.accent, "left", "bottom");
      label(g, "k", 22, 22, colors.warn, "left", "bottom");
    }
    // the plots below do not depend on p and k: kept while only those move
    const heavy = JSON.stringify([c, s.d, s.base, s.orig, s.test, lang, sizes.get($("cv-score")).w]);
    if (!force && heavy === ropeDrawn) return;
    ropeDrawn = heavy;
    // the score against distance r = m - n: (1/pairs) Σ cos(r θ_i), times the factor squared
    {
      const cv = $("cv-score"), sf = surface(cv), g = sf.g;
      // whole distances r = j·step (one step for all, so each pair turns by step·θᵢ per point)
      const T = s.test, most = Math.min(400, Math.max(60, Math.round(sf.w / 2)));
      const step = Math.max(1, Math.ceil((T - 1) / (most - 1))), pts = Math.floor((T - 1) / step) + 1;
      const rs = Array.from({ length: pts }, (_, j) => j * step);
      const score = (freqs, f) => {
        const out = new Array(pts), C = new Float64Array(n), S = new Float64Array(n);
        const th = Float64Array.from(freqs); // one element kind for both calls (no deopt)
        const CD = th.map((x) => Math.cos(step * x)), SD = th.map((x) => Math.sin(step * x));
        for (let j = 0; j < pts; j++) {
          let acc = 0;
          for (let i = 0; i < n; i++) {
            if ((j & 63) === 0) {
              C[i] = Math.cos(rs[j] * th[i]); // afresh every 64th point, else angle addition
              S[i] = Math.sin(rs[j] * th[i]);
            }
            const c = C[i];
            acc += c;
            C[i] = c * CD[i] - S[i] * SD[i];
            S[i] = S[i] * CD[i] + c * SD[i];
          }
          out[j] = (f * acc) / n;
        }
        return out;
      };
      const a = score(plain, 1), b = score(theta, af2);
      const fr = frame(sf, { lo: 0, hi: T - 1, label: t("ax_distance_mn") }, {
        lo: Math.min(-0.2, ...a, ...b) - 0.05, hi: Math.max(1, ...b) + 0.05, label: t("ax_score"),
      });
      clip(g, fr.box);
      polyline(g, rs, a, fr.X, fr.Y, colors.muted, 2);
      polyline(g, rs, b, fr.X, fr.Y, colors.accent, 2);
      g.strokeStyle = colors.warn;
      g.setLineDash([6, 4]);
      g.beginPath();
      g.moveTo(fr.X(Math.min(s.orig, T - 1)), fr.box.y0);
      g.lineTo(fr.X(Math.min(s.orig, T - 1)), fr.box.y1);
      g.stroke();
      g.setLineDash([]);
      g.restore();
      label(g, fill("scaling_orig_label", { orig: group(s.orig) }), fr.X(Math.min(s.orig, T - 1)) + 4, fr.box.y0 + 4, colors.warn, "left", "top");
      label(g, t("rope_plain"), fr.box.x1 - 4, fr.box.y0 + 4, colors.muted, "right", "top");
      label(g, fill("rope_scaled", { type: typeName }), fr.box.x1 - 4, fr.box.y0 + 28, colors.accent, "right", "top");
    }
    // the arc each pair reaches: in training (plain θ over L) and at T, plain and scaled
    const train = P.angleReach(plain, s.orig);
    const test0 = P.angleReach(plain, s.test), test1 = P.angleReach(theta, s.test);
    const unseen0 = P.unseenAngles(plain, plain, s.orig, s.test);
    const unseen1 = P.unseenAngles(plain, theta, s.orig, s.test);
    {
      const cv = $("cv-unseen"), sf = surface(cv), g = sf.g;
      const ks = Array.from({ length: n }, (_, i) => i);
      const fr = frame(sf, { lo: 0, hi: Math.max(1, n - 1), label: t("ax_pair_speed") }, { lo: 0, hi: 2 * Math.PI * 1.08, label: t("ax_angle") });
      clip(g, fr.box);
      // the angles never seen: between the training arc and the test arc
      g.fillStyle = colors.warn;
      g.globalAlpha = 0.25;
      g.beginPath();
      ks.forEach((i) => g.lineTo(fr.X(i), fr.Y(test0[i])));
      for (let i = n - 1; i >= 0; i--) g.lineTo(fr.X(i), fr.Y(train[i]));
      g.fill();
      g.globalAlpha = 1;
      polyline(g, ks, train, fr.X, fr.Y, colors.text, 3);
      polyline(g, ks, test0, fr.X, fr.Y, colors.warn, 2, [6, 4]);
      polyline(g, ks, test1, fr.X, fr.Y, colors.accent, 2);
      g.restore();
      label(g, t("rope_train"), fr.box.x0 + 6, fr.box.y1 - 4, colors.text, "left", "bottom");
      label(g, t("rope_plain"), fr.box.x0 + 6, fr.box.y1 - 28, colors.warn, "left", "bottom");
      label(g, fill("rope_scaled", { type: typeName }), fr.box.x0 + 6, fr.box.y1 - 52, colors.accent, "left", "bottom");
    }
    const count = (u) => u.filter((x) => x > DATA.unseen_min).length; // card 4's rule
    readout($("ro-rope"), fill("rope_readout", {
      L: group(s.orig), T: group(s.test), pairs: String(n), n0: String(count(unseen0)), n1: String(count(unseen1)),
      a0: num(Math.max(...unseen0), 2), a1: num(Math.max(...unseen1), 2), type: typeName, af2: num(af2, 4),
      min: String(DATA.unseen_min),
    }));
    for (const id of ["cv-turn", "cv-score", "cv-unseen"]) $(id).setAttribute("aria-label", t("rope_title"));
  });

  const alibiWeights = M.alibiWeights;

  view("alibi", ["heads", "head", "ctx"], (s) => {
    const slopes = P.alibiSlopes(s.heads);
    const n = Math.min(s.ctx, ATTN_MAX_POSITIONS);
    // slopes per head
    {
      const sf = surface($("cv-slopes")), g = sf.g;
      const fr = frame(sf, { lo: 0.5, hi: s.heads + 0.5, label: t("ax_head") }, {
        lo: Math.min(...slopes) / 2, hi: Math.max(...slopes) * 2, log: true, label: t("ax_slope"),
      });
      for (let h = 0; h < s.heads; h++) {
        g.fillStyle = h + 1 === s.head ? colors.warn : colors.accent;
        g.beginPath();
        g.arc(fr.X(h + 1), fr.Y(slopes[h]), h + 1 === s.head ? 6 : 4, 0, 2 * Math.PI);
        g.fill();
      }
    }
    // attention by distance, every head; the chosen head on top
    const w = slopes.map((m) => alibiWeights(m, n));
    {
      const sf = surface($("cv-attn")), g = sf.g;
      let lo = 1;
      for (const row of w) lo = Math.min(lo, row[n - 1]);
      lo = Math.max(lo, 1e-12);
      const fr = frame(sf, { lo: 0, hi: n - 1 || 1, label: t("ax_distance") }, { lo: lo / 2, hi: 1.5, log: true, label: t("ax_weight") });
      clip(g, fr.box);
      const stride = Math.max(1, Math.ceil(n / ((fr.box.x1 - fr.box.x0) / 2)));
      const xs = [];
      for (let d = 0; d < n; d += stride) xs.push(d);
      for (let h = 0; h < s.heads; h++) {
        if (h + 1 === s.head) continue;
        polyline(g, xs, xs.map((d) => Math.max(w[h][d], 1e-300)), fr.X, fr.Y, colors.muted, 1);
      }
      const hw = w[s.head - 1];
      polyline(g, xs, xs.map((d) => Math.max(hw[d], 1e-300)), fr.X, fr.Y, colors.warn, 2.5);
      g.restore();
    }
    // bias matrix of the chosen head over a few tokens
    {
      const sf = surface($("cv-bias")), g = sf.g;
      const L = 16, m = slopes[s.head - 1];
      const fr = frame(sf, { lo: -0.5, hi: L - 0.5, label: t("ax_key") }, { lo: L - 0.5, hi: -0.5, label: t("ax_query") });
      const cw = (fr.box.x1 - fr.box.x0) / L, chh = (fr.box.y1 - fr.box.y0) / L;
      const px = new Uint8ClampedArray(4);
      for (let i = 0; i < L; i++) {
        for (let j = 0; j < L; j++) {
          if (j > i) {
            g.fillStyle = colors.edge;
          } else {
            divColor(-(m * (i - j)) / (m * (L - 1)), px, 0);
            g.fillStyle = `rgb(${px[0]},${px[1]},${px[2]})`;
          }
          g.fillRect(fr.X(j - 0.5) + 0.5, fr.Y(i - 0.5) + 0.5, cw - 1, chh - 1);
        }
      }
    }
    const hw = w[s.head - 1];
    let acc = 0, half = 0;
    while (half < n && (acc += hw[half]) < 0.5) half++;
    readout($("ro-alibi"), fill("alibi_readout", {
      h: String(s.head), heads: String(s.heads), m: sig(slopes[s.head - 1], 4), step: num(Math.exp(-slopes[s.head - 1]), 4),
      half: group(half + 1), n: group(n), corner: num(-slopes[s.head - 1] * 15, 3),
    }));
  });

  view("buckets", ["nb", "md", "bidir"], (s) => {
    const R = Math.min(2 * s.md, 4096);
    const r = [];
    for (let x = -R; x <= R; x++) r.push(x);
    let t5 = null, deb = null;
    const ro = $("ro-buckets");
    const errs = [];
    try {
      t5 = P.t5RelativeBucket(r, s.bidir, s.nb, s.md);
    } catch (e) {
      errs.push(e);
    }
    try {
      deb = P.debertaLogBucket(r, s.nb, s.md);
    } catch (e) {
      errs.push(e);
    }
    const draw = (cvId, ys, ylab) => {
      const sf = surface($(cvId)), g = sf.g;
      if (!ys) {
        frame(sf, { lo: -R, hi: R, label: t("ax_relative") }, { lo: 0, hi: 1, label: ylab });
        return;
      }
      const fr = frame(sf, { lo: -R, hi: R, label: t("ax_relative") }, { lo: Math.min(...ys) - 1, hi: Math.max(...ys) + 1, label: ylab });
      clip(g, fr.box);
      g.strokeStyle = colors.accent;
      g.lineWidth = 2;
      g.beginPath();
      for (let i = 0; i < r.length; i++) {
        const x = fr.X(r[i]), y = fr.Y(ys[i]);
        if (i === 0) g.moveTo(x, y);
        else {
          g.lineTo(x, fr.Y(ys[i - 1]));
          g.lineTo(x, y);
        }
      }
      g.stroke();
      g.restore();
    };
    draw("cv-t5", t5, t("ax_bucket_t5"));
    draw("cv-deberta", deb, t("ax_bucket_deberta"));
    if (errs.length) {
      showError(ro, errs[0]);
      return;
    }
    // first distance (keys before the query) that lands in the last bucket
    const lastBucket = Math.max(...t5.slice(0, R + 1));
    let lastStart = 0;
    for (let dist = 0; dist <= R; dist++) if (t5[R - dist] === lastBucket) { lastStart = dist; break; }
    const exact = s.bidir ? Math.floor(s.nb / 4) : Math.floor(s.nb / 2);
    readout(ro, fill("buckets_readout", {
      exact: String(exact), last: group(lastStart), bucket: String(lastBucket), md: group(s.md),
      mid: String(Math.floor(s.nb / 2)), R: group(R), far: String(deb[2 * R]),
    }));
  });


  // ------------------------------------------------------------------------------------------
  // card 10's calculators: Liu et al.'s critical dimension, Men et al.'s smallest base
  // ------------------------------------------------------------------------------------------
  let baseRun = null; // the smallest-base search under way: {key, it}
  function baseIdle(s) {
    readout($("ro-calc-base"), fill("calc_base_idle", { L: group(s.orig), d: String(s.d) }));
  }
  view("calc", ["base", "d", "orig"], (s) => {
    const L = s.orig;
    const lam = P.wavelengths(s.d, s.base); // periods 2π/θ_i
    const half = lam.length;
    const dextra = P.criticalDimension(s.d, s.base, L);
    const turn = P.turningPairs(s.d, s.base, L);
    const textra = P.extrapolationBound(s.d, s.base, L);
    {
      const cv = $("cv-crit"), sf = surface(cv), g = sf.g;
      const fr = frame(sf, { lo: -0.5, hi: half - 0.5, label: t("ax_pair") }, {
        lo: Math.min(lam[0], L) / 1.5, hi: Math.max(lam[half - 1], L) * 1.5, log: true, label: t("ax_period"),
      });
      clip(g, fr.box);
      g.strokeStyle = colors.warn;
      g.lineWidth = 2;
      g.setLineDash([6, 4]);
      g.beginPath();
      g.moveTo(fr.box.x0, fr.Y(L));
      g.lineTo(fr.box.x1, fr.Y(L));
      g.moveTo(fr.X(dextra / 2 - 0.5), fr.box.y0);
      g.lineTo(fr.X(dextra / 2 - 0.5), fr.box.y1);
      g.stroke();
      g.setLineDash([]);
      const r = Math.max(1.5, Math.min(4, (fr.box.x1 - fr.box.x0) / half / 2.5));
      for (const inL of [true, false]) {
        const ix = lam.map((_, i) => i).filter((i) => (lam[i] <= L) === inL);
        dots(g, ix, ix.map((i) => lam[i]), fr.X, fr.Y, r, inL ? colors.accent : colors.muted);
      }
      traces.get(cv).lines.push({ xs: lam.map((_, i) => i), ys: lam, X: fr.X, color: colors.accent });
      g.restore();
      label(g, fill("scaling_orig_label", { orig: group(L) }), fr.box.x0 + 6, fr.Y(L) - 3, colors.warn, "left", "bottom");
      label(g, fill("calc_dextra_label", { n: String(dextra) }), Math.min(fr.X(dextra / 2 - 0.5) + 6, fr.box.x1 - 110), fr.box.y1 - 4, colors.warn, "left", "bottom");
    }
    {
      // B(m)/(d/2) at whole steps over 0 … L - 1 (angle addition, afresh every 64th point)
      const cv = $("cv-bound"), sf = surface(cv), g = sf.g;
      const theta = Float64Array.from(lam, (w) => (2 * Math.PI) / w);
      const most = Math.min(400, Math.max(60, Math.round(sf.w / 2)));
      const step = Math.max(1, Math.ceil((L - 1) / (most - 1))), pts = Math.floor((L - 1) / step) + 1;
      const ms = Array.from({ length: pts }, (_, j) => j * step);
      const C = new Float64Array(half), S = new Float64Array(half);
      const CD = theta.map((x) => Math.cos(step * x)), SD = theta.map((x) => Math.sin(step * x));
      const mean = ms.map((m, j) => {
        let acc = 0;
        for (let i = 0; i < half; i++) {
          if ((j & 63) === 0) {
            C[i] = Math.cos(m * theta[i]);
            S[i] = Math.sin(m * theta[i]);
          }
          const c = C[i];
          acc += c;
          C[i] = c * CD[i] - S[i] * SD[i];
          S[i] = S[i] * CD[i] + c * SD[i];
        }
        return acc / half;
      });
      const fr = frame(sf, { lo: 0, hi: Math.max(1, L - 1), label: t("ax_distance_mn") },
        { lo: Math.min(-0.2, ...mean) - 0.05, hi: 1.05, label: t("ax_mean_cos") });
      clip(g, fr.box);
      g.strokeStyle = colors.edge;
      g.beginPath();
      g.moveTo(fr.box.x0, fr.Y(0));
      g.lineTo(fr.box.x1, fr.Y(0));
      g.stroke();
      polyline(g, ms, mean, fr.X, fr.Y, colors.accent, 1.5);
      g.restore();
    }
    readout($("ro-calc"), fill("calc_readout", {
      d: String(s.d), base: group(s.base), L: group(L), turn: String(turn), pairs: String(half),
      dextra: String(dextra), textra: group(textra),
    }));
    // a search for other inputs is stopped; its result would not be these inputs'
    const key = `${s.d}|${s.base}|${L}`;
    if (!baseRun || baseRun.key !== key) {
      baseRun = null;
      baseIdle(s);
    }
    for (const id of ["cv-crit", "cv-bound"]) $(id).setAttribute("aria-label", t("calc_title"));
  });
  $("calc-base").addEventListener("click", () => {
    const s = readState(), key = `${s.d}|${s.base}|${s.orig}`;
    const run = { key, it: M.smallestBaseSearch(s.orig, s.d) };
    baseRun = run;
    const slice = () => {
      if (baseRun !== run) return; // the inputs moved: stopped
      const t0 = performance.now();
      try {
        let r = run.it.next();
        while (!r.done && performance.now() - t0 < 12) r = run.it.next();
        if (!r.done) {
          readout($("ro-calc-base"), fill("calc_base_running", {
            L: group(s.orig), d: String(s.d), pct: String(Math.floor(100 * r.value)),
          }));
          setTimeout(slice, 0);
          return;
        }
        const first = P.firstNegative(s.orig, s.d, s.base);
        readout($("ro-calc-base"), fill("calc_base_result", {
          L: group(s.orig), d: String(s.d), min: group(r.value), base: group(s.base),
          verdict: first === null ? t("calc_holds") : fill("calc_fails", { m: group(first) }),
        }));
      } catch (e) {
        showError($("ro-calc-base"), e);
      }
    };
    slice();
  });

  // ------------------------------------------------------------------------------------------
  // 2-D positions and MRoPE: which axis drives each frequency (mrope.py, rope_2d.py)
  // ------------------------------------------------------------------------------------------
  const AX2 = DATA.axes2d;
  const MROPE = Object.fromEntries(AX2.mrope.map((m) => [m.id, m]));
  const axisColor = (a) => [colors.accent, colors.warn, colors.ok][a];
  /** dots (x, y) coloured by axis on a log y scale; each axis a trace for hover */
  function axisDots(cv, xs, ys, axes, names, xLabel, yLabel) {
    const sf = surface(cv), g = sf.g;
    const lo = Math.min(...ys), hi = Math.max(...ys);
    const fr = frame(sf, { lo: -0.5, hi: xs.length - 0.5, label: xLabel },
      { lo: lo / 1.6, hi: hi * 1.6, log: true, label: yLabel });
    const tr = traces.get(cv);
    tr.eachX = true;
    const r = Math.max(2, Math.min(5, (fr.box.x1 - fr.box.x0) / xs.length / 2.2));
    names.forEach((name, a) => {
      const ix = xs.filter((_, i) => axes[i] === a);
      if (!ix.length) return;
      tr.lines.push({ xs: ix, ys: ix.map((i) => ys[i]), X: fr.X, color: axisColor(a), name });
      dots(g, ix, ix.map((i) => ys[i]), fr.X, fr.Y, r, axisColor(a));
    });
    g.font = font();
    let lx = fr.box.x0 + 8; // the legend, one name after the other
    names.forEach((name, a) => {
      label(g, name, lx, fr.box.y0 + 4, axisColor(a), "left", "top");
      lx += g.measureText(name).width + 16;
    });
    return fr;
  }
  /** "t 16 (wavelengths 6.28 … 1,170)" per axis */
  function perAxis(axes, wl, names) {
    return names.map((name, a) => {
      const w = wl.filter((_, i) => axes[i] === a);
      if (!w.length) return fill("axes2d_axis_none", { axis: name });
      return fill("axes2d_axis", { axis: name, n: String(w.length), lo: sig(Math.min(...w)), hi: sig(Math.max(...w)) });
    }).join("; ");
  }
  view("axes2d", ["mrope", "mropeLayout", "conv"], (s) => {
    const m = MROPE[s.mrope];
    // text: θ_j = b^(-2j/d) of the head (default RoPE), axis of each j by the split
    const theta = P.headInvFreq(m.head_dim, { rope_type: "default", rope_theta: m.rope_theta }).invFreq;
    const axes = P.mropeAxes(m.section, theta.length, s.mropeLayout);
    const wl = theta.map((x) => (2 * Math.PI) / x);
    const tNames = ["axis_t", "axis_h", "axis_w"].map(t);
    axisDots($("cv-mrope"), theta.map((_, j) => j), wl, axes, tNames, t("ax_freq_j"), t("ax_wl_ids"));
    // vision: pair p's angle per step along its own axis, wavelength 2π / step
    const vd = AX2.vision_head_dim, vb = AX2.vision_bases[s.conv];
    const pairs = P.visionRopePairs(s.conv, vd, vb);
    const step = [0, 1].map((a) => P.stepAngles(s.conv, vd, vb, a, AX2.vision_grid));
    const vwl = pairs.axis.map((a, q) => (2 * Math.PI) / step[a][q]);
    const vNames = ["axis_h", "axis_w"].map(t);
    axisDots($("cv-vis2d"), pairs.axis.map((_, q) => q), vwl, pairs.axis, vNames, t("ax_pair_p"), t("ax_wl_patches"));
    const own = m.layout === s.mropeLayout ? t("mrope_own") : fill("mrope_other", { own: t("mrope_" + m.layout) });
    readout($("ro-axes2d"), fill("axes2d_readout", {
      model: t(m.model), d: String(m.head_dim), base: group(m.rope_theta), section: `[${m.section.join(", ")}]`,
      layout: t("mrope_" + s.mropeLayout), own, axes: perAxis(axes, wl, tNames), conv: t("conv_" + s.conv),
      vd: String(vd), vbase: group(vb), vaxes: perAxis(pairs.axis, vwl, vNames),
    }));
  });

  // ------------------------------------------------------------------------------------------
  // card 8's four terms of (x + p)ᵀW_qW_kᵀ(x + p), on a seeded draw (score_terms.py, seeded.py)
  // ------------------------------------------------------------------------------------------
  const TERMS = DATA.terms, TERM_NAMES = TERMS.names; // cc, cp, pc, pp (score_terms.ScoreTerms)
  const tl = (k) => TERMS.labels[k][li()]; // card 8's own words (its [labels])
  const termsDraw = {}; // the content's draw and projections, kept while d and the seed stay
  /** a table row of cells [text, class, scope]: a th where a scope is given, else a td */
  function tableRow(cells) {
    const tr = document.createElement("tr");
    for (const [text, cls, scope] of cells) {
      const c = document.createElement(scope ? "th" : "td");
      Object.assign(c, { textContent: text, className: cls || "" });
      if (scope) c.scope = scope;
      tr.append(c);
    }
    return tr;
  }
  view("terms", ["base", "d", "seed"], (s) => {
    const cv = $("cv-terms"), sf = surface(cv), g = sf.g;
    const { terms, rms, n } = M.seededTermsArrays(TERMS.tokens, s.d, TERMS.d_head, s.base, s.seed, TERMS.content_rms, termsDraw);
    let top = 0;
    for (const m of terms) for (const v of m) top = Math.max(top, Math.abs(v));
    // four squares side by side (two by two on a phone), one colour scale ±top centred on 0
    const cols = sf.w < 520 ? 2 : 4, gap = 18, left = 28, head = 26, foot = 24;
    const side = Math.floor(Math.min((sf.w - left - gap * (cols - 1)) / cols, (sf.h * cols) / 4 - head - foot));
    const cell = side / n, cmap = colorLUT();
    // each map's n × n cells as pixels of a small canvas, drawn scaled up without smoothing
    const small = Object.assign(termsDraw.cv || (termsDraw.cv = document.createElement("canvas")), { width: n, height: n });
    const sg = small.getContext("2d"), img = sg.createImageData(n, n), words = new Uint32Array(img.data.buffer);
    g.imageSmoothingEnabled = false;
    const boxes = terms.map((m, k) => {
      const x0 = left + (k % cols) * (side + gap), y0 = Math.floor(k / cols) * (side + head + foot) + head;
      for (let q = 0; q < n * n; q++) words[q] = cmap[((m[q] / top + 1) * 511.5 + 0.5) | 0];
      sg.putImageData(img, 0, 0);
      g.drawImage(small, x0, y0, side, side);
      g.strokeStyle = colors.edge;
      g.strokeRect(x0 + 0.5, y0 + 0.5, side, side);
      label(g, `${TERM_NAMES[k]} · ${tl("rms")} ${num(rms[k], 2)}`, x0, y0 - 4, colors.text);
      label(g, `${tl("key_j")} →`, x0 + side / 2, y0 + side + 2, colors.muted, "center", "top");
      if (k % cols === 0) {
        g.save();
        g.translate(left - 4, y0 + side / 2);
        g.rotate(-Math.PI / 2);
        label(g, `← ${tl("query_i")}`, 0, 0, colors.muted, "center");
        g.restore();
      }
      return [x0, y0];
    });
    // hover: the term, query i and key j under the pointer, and its value
    traces.get(cv).pick = (x, y) => {
      const k = boxes.findIndex(([x0, y0]) => x >= x0 && x < x0 + side && y >= y0 && y < y0 + side);
      if (k < 0) return null;
      const i = Math.floor((y - boxes[k][1]) / cell), j = Math.floor((x - boxes[k][0]) / cell);
      return [`${TERM_NAMES[k]} · ${tl("query_i")} = ${i} · ${tl("key_j")} = ${j} · ${sig(terms[k][i * n + j], 4)}`];
    };
    // card 8's table: what each scheme does with each term; this draw's rms below
    const tb = $("terms-table");
    tb.replaceChildren(tb.caption, tableRow([[""], ...TERM_NAMES.map((nm) => [nm, "", "col"])]),
      ...TERMS.schemes.map(([sc, kinds]) => tableRow([[tl("scheme_" + sc), "", "row"],
        ...kinds.map((k) => [tl(k), k === "kind_none" ? "none" : "kept"])])),
      tableRow([[tl("rms"), "", "row"], ...rms.map((v) => [num(v, 2), "rms"])]));
    $("terms-key").textContent = tl("kinds_key");
    readout($("ro-terms"), fill("terms_readout", {
      seed: String(s.seed), n: String(n), d: String(s.d), dh: String(TERMS.d_head), c: num(TERMS.content_rms, 3), top: sig(top, 3),
    }));
    cv.setAttribute("aria-label", t("terms_title"));
  });

  // ------------------------------------------------------------------------------------------
  // update loop: redraw the views whose inputs changed
  // ------------------------------------------------------------------------------------------
  function keyOf(s, deps) {
    return deps.map((d) => (d === "rope" ? JSON.stringify(ropeCall(s)) : s[d])).join("|");
  }
  let force = true;
  let playing = false;
  let hashReady = false; // the URL fragment is written from the first full update on
  let hashTimer = 0;
  const timings = {};
  // while a slider is dragged (pointer down on it), a view off screen waits: it is redrawn when
  // the drag ends or when it scrolls into view, so each move redraws only what can be seen
  let dragging = false;
  const onScreen = new Set();
  let screenKnown = false; // until the observer first reports, every view counts as on screen
  const observer = new IntersectionObserver((entries) => {
    screenKnown = true;
    for (const e of entries) {
      if (e.isIntersecting) onScreen.add(e.target.id.slice(2));
      else onScreen.delete(e.target.id.slice(2));
    }
    if (views.some((v) => v.waiting && onScreen.has(v.id))) update();
  });
  function update() {
    for (const k of Object.keys(timings)) delete timings[k];
    const t0 = performance.now();
    syncControls();
    const s = readState();
    writeOutputs(s);
    timings[" controls"] = performance.now() - t0; // reading and echoing the controls
    for (const v of views) {
      const key = keyOf(s, v.deps);
      if (!force && key === v.last && !v.waiting) continue;
      v.last = key;
      v.waiting = !force && dragging && screenKnown && !onScreen.has(v.id);
      if (v.waiting) continue;
      const t0 = performance.now();
      try {
        v.draw(s);
        timings[v.id] = performance.now() - t0;
      } catch (e) {
        showError($("ro-" + v.id), e);
      }
    }
    force = false;
    if (hashReady) {
      // the fragment once the controls rest (history.replaceState is slow for every move)
      clearTimeout(hashTimer);
      hashTimer = setTimeout(writeHash, 150);
    }
  }

  function applyLang() {
    document.documentElement.lang = lang === "zh" ? "zh-Hans" : "en";
    for (const el of document.querySelectorAll("[data-s]")) el.textContent = t(el.dataset.s);
    document.title = t("page_title");
    for (const o of $("preset").options) if (o.value) o.textContent = presetLabel(PRESETS[o.value]);
    for (const a of document.querySelectorAll("a[data-card]")) {
      a.textContent = fill("card_link", { n: a.dataset.card });
      a.href = `${lang}/${DATA.card_pages[a.dataset.card]}`;
    }
    presetNote();
    $("play").textContent = t(playing ? "pause" : "play");
    force = true;
  }
  function applyTheme(name) {
    document.body.dataset.theme = name;
    readColors();
    force = true;
  }

  // base: the slider (log scale) and the number box stay in step
  $("base-exp").addEventListener("input", () => {
    $("base").value = String(roundSig(Math.pow(10, Number($("base-exp").value)), 3));
  });
  $("base").addEventListener("input", () => {
    const b = Number($("base").value);
    if (b > 1 && Number.isFinite(b)) $("base-exp").value = String(Math.log10(b));
  });
  // an MRoPE model brings its own split (its listener runs before the update below)
  $("mrope").addEventListener("change", () => ($("mrope-layout").value = MROPE[$("mrope").value].layout));
  for (const v of views) observer.observe($("v-" + v.id));
  $("controls").addEventListener("pointerdown", (e) => (dragging = e.target.type === "range"));
  const dragEnd = () => {
    if (!dragging) return;
    dragging = false;
    update(); // the views that waited
  };
  for (const ev of ["pointerup", "pointercancel"]) window.addEventListener(ev, dragEnd);
  for (const id of CONTROL_IDS) {
    $(id).addEventListener("input", update);
    $(id).addEventListener("change", update);
  }
  // a control of the preset moved by hand: the settings are the user's own from now on
  for (const id of PRESET_CONTROLS) {
    $(id).addEventListener("input", () => {
      if (!preset) return;
      preset = null;
      $("preset").value = "";
      presetNote();
      update();
    });
  }
  $("preset").addEventListener("change", () => applyPreset($("preset").value));
  $("lang").addEventListener("change", () => {
    lang = $("lang").value;
    applyLang();
    measure();
    update();
  });
  $("theme").addEventListener("change", () => {
    applyTheme($("theme").value);
    update();
  });
  function tick() {
    if (!playing) return;
    const ctx = Number($("p").max) + 1;
    $("p").value = String((Number($("p").value) + 1) % ctx);
    update();
    requestAnimationFrame(tick);
  }
  $("play").addEventListener("click", () => {
    playing = !playing;
    $("play").setAttribute("aria-pressed", String(playing));
    $("play").textContent = t(playing ? "pause" : "play");
    if (playing) requestAnimationFrame(tick);
  });
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      force = true;
      measure();
      update();
    }, 100);
  });

  // a phone shows the controls as a sheet over the page's bottom: using one brings a view it
  // drives on screen, its picture just above the sheet (the views are the data-views of the
  // control's row in explore.html.j2), unless half of one such picture already is
  function showView(e) {
    const row = PHONE.matches && e.target.closest("[data-views]");
    if (!row) return;
    const top = $("controls").getBoundingClientRect().top;
    // "view" (its first picture) or "view:canvas"
    const pics = row.dataset.views.split(" ").map((v) => {
      const [sec, cv] = v.split(":");
      return cv ? $(`cv-${cv}`) : $(`v-${sec}`).querySelector("canvas");
    });
    const shown = (c) => { const r = c.getBoundingClientRect();
      return Math.min(r.bottom, top) - Math.max(r.top, 0) >= r.height / 2; };
    if (pics.some(shown)) return;
    const r = pics[0].getBoundingClientRect();
    scrollBy(0, r.height > top ? r.top : r.bottom - top + 8);
  }
  // the state in the URL fragment (#d=128&rope-type=llama3&preset=...): every control that is
  // not at its default, by its id and own value; a copied link reopens it (nothing is loaded)
  const STATE_IDS = ["lang", "theme", ...CONTROL_IDS, "preset"];
  const isBox = (el) => el.type === "checkbox";
  const initial = (el) => (isBox(el) ? String(el.defaultChecked)
    : el.tagName === "SELECT" ? ([...el.options].find((o) => o.defaultSelected) || el.options[0]).value
      : el.defaultValue);
  const current = (el) => (isBox(el) ? String(el.checked) : el.value);
  let hashWritten = "";
  function writeHash() {
    const q = new URLSearchParams();
    for (const id of STATE_IDS) {
      const el = $(id);
      const value = id === "lang" ? lang : id === "theme" ? document.body.dataset.theme : current(el);
      const start = id === "lang" ? DATA.lang : id === "theme" ? DATA.theme : initial(el);
      if (value !== start) q.set(id, value);
    }
    hashWritten = q.toString() ? "#" + q.toString() : "";
    if (location.hash !== hashWritten) history.replaceState(null, "", hashWritten || location.pathname + location.search);
  }
  function readHash() {
    const q = new URLSearchParams(location.hash.slice(1));
    for (const id of STATE_IDS) {
      const el = $(id);
      const value = q.has(id) ? q.get(id) : id === "lang" ? DATA.lang : id === "theme" ? DATA.theme : initial(el);
      if (isBox(el)) el.checked = value === "true";
      else el.value = value;
    }
    if (Number($("base").value) > 1) $("base-exp").value = String(Math.log10(Number($("base").value)));
    preset = PRESETS[$("preset").value] || null;
    if (!preset) $("preset").value = "";
    // a preset alone (a card's link): its controls as choosing it sets them
    const setsControls = preset && !PRESET_CONTROLS.some((id) => q.has(id));
    lang = DATA.langs.includes($("lang").value) ? $("lang").value : DATA.lang;
    $("lang").value = lang;
    if (!["light", "dark"].includes($("theme").value)) $("theme").value = DATA.theme;
    applyTheme($("theme").value);
    applyLang();
    measure();
    if (setsControls) applyPreset(preset.id);
    else update();
  }
  window.addEventListener("hashchange", () => {
    if (location.hash !== hashWritten) readHash();
  });
  $("reset").addEventListener("click", () => {
    history.replaceState(null, "", location.pathname + location.search);
    if (playing) $("play").click();
    readHash();
    writeHash();
  });
  const tip = $("tip");
  function place(e) {
    tip.hidden = false;
    tip.style.left = `${Math.min(e.clientX + 14, innerWidth - tip.offsetWidth - 4)}px`;
    tip.style.top = `${e.clientY + 14}px`;
  }
  function hover(e) {
    const tr = traces.get(e.target);
    const r = e.target.getBoundingClientRect(), px = e.clientX - r.left;
    const picked = tr && tr.pick && tr.pick(px, e.clientY - r.top);
    if (picked) {
      tip.replaceChildren(...picked.map((text) => Object.assign(document.createElement("div"), { textContent: text })));
      return place(e);
    }
    if (!tr || !tr.lines.length) return (tip.hidden = true);
    let rows = tr.lines.map(({ xs, ys, X, color, name }) => {
      let best = 0;
      for (let i = 1; i < xs.length; i++) if (Math.abs(X(xs[i]) - px) < Math.abs(X(xs[best]) - px)) best = i;
      return [xs[best], ys[best], color, name, Math.abs(X(xs[best]) - px)];
    });
    // dots of one series per axis: only the dot under the pointer, with its axis
    if (tr.eachX) rows = [rows.reduce((a, b) => (b[4] < a[4] ? b : a))];
    tip.replaceChildren(...rows.map(([x, y, color, name], i) => {
      const line = document.createElement("div");
      const mark = document.createElement("span");
      mark.className = "mark";
      mark.style.background = color;
      const xs = Number.isInteger(x) ? group(x) : sig(x, 4);
      const head = tr.eachX ? `${name} · ${tr.axes[0]} ${xs} · ` : i ? "" : `${tr.axes[0]} ${xs} · `;
      line.append(mark, `${head}${tr.axes[1]} ${sig(y, 4)}`);
      return line;
    }));
    place(e);
  }
  for (const cv of document.querySelectorAll("canvas")) {
    cv.addEventListener("pointermove", hover);
    cv.addEventListener("pointerleave", () => (tip.hidden = true));
  }
  $("controls").addEventListener("focusin", showView);
  $("controls").addEventListener("input", showView);
  $("lang").value = lang;
  $("theme").value = DATA.theme;
  hashReady = true;
  readHash(); // the link's state, or every default
  const go = $(`v-${new URLSearchParams(location.hash.slice(1)).get("view")}`);
  if (go) go.scrollIntoView(); // a card's link: its view

  // for the benchmark and tests: time one full redraw of every view
  window.posecardsExplorer = Object.freeze({
    /** the head_inv_freq call of the RoPE views now: [head_dim, parameters, mpe, seq_len, partial_in_default] */
    ropeCall() {
      const s = readState(), c = ropeCall(s);
      return [s.d, c.scaling, c.mpe, c.seqLen, c.partialInDefault];
    },
    redrawAll() {
      force = true;
      const t0 = performance.now();
      update();
      return performance.now() - t0;
    },
    update() {
      const t0 = performance.now();
      update();
      return performance.now() - t0;
    },
    /** milliseconds each view took in the last update (the views it redrew) */
    timings: () => ({ ...timings }),
    /** the views waiting for a drag to end (off screen while it went on) */
    waiting: () => views.filter((v) => v.waiting).map((v) => v.id),
  });
})();
