/* posecards explorer: the math layer in JavaScript (window.posecards on the page; the same
 * file runs under Node in the test suite's fast lane, tests/node/explore_api.mjs).
 *
 * A mirror of posecards/encodings (sinusoidal.py, similarity.py, rope_scaling.py, rope_partial.py,
 * alibi.py, buckets.py, unseen_angles.py, seeded.py, score_terms.py) and posecards/formatting.py: same names (camelCase),
 * same Hugging Face rope_parameters keys, same order of argument checks. It holds no constant
 * of its own: every table, key list and default comes from the payload Python writes
 * (posecards/render/explore.py: math_payload), handed to posecardsMath(C).
 *
 * Errors agree with Python's in kind and argument, not in wording: an Error whose name is the
 * Python exception's class ("ValueError", "TypeError", ...) and whose `arg` is the argument
 * Python's message names ("d_model", "scaling['factor']", an unknown key), or null where Python
 * raises from a builtin (float(), math.log, a division) whose message names no argument.
 * JS numbers are IEEE float64 like np.float64; a whole number passed where Python takes an
 * int (dims, head counts, lengths) is that int.
 *
 * The bucket functions reproduce, as the Python does, the float32 arithmetic of the reference
 * implementations (Math.fround after each operation); their float32 logarithm is the correctly
 * rounded one, as in buckets.py (Math.log in float64, rounded by Math.fround, with an exact
 * BigInt logarithm where that rounding is not settled), so the page gives the buckets Python
 * gives on every CPU.
 */
// eslint-disable-next-line no-unused-vars
function posecardsMath(C) {
  "use strict";

  // ---------------------------------------------------------------------------------------
  // errors (kind and argument) and Python's conversions
  // ---------------------------------------------------------------------------------------
  function fail(kind, arg, detail) {
    const e = new Error(arg === null ? detail : `${arg}: ${detail}`);
    e.name = kind;
    e.arg = arg;
    return e;
  }
  const valueError = (arg, detail) => fail("ValueError", arg, detail);
  const show = (v) => (typeof v === "number" || v === undefined ? String(v) : JSON.stringify(v));
  const D = C.defaults; // each function's keyword defaults, from the Python signatures

  const FLOAT_TEXT = /^[+-]?((\d(_?\d)*)?\.?(\d(_?\d)*)?([eE][+-]?\d(_?\d)*)?|inf|infinity|nan)$/i;

  /** Python's float(value). */
  function toFloat(v) {
    if (typeof v === "number") return v;
    if (typeof v === "boolean") return v ? 1 : 0;
    if (typeof v === "string") {
      const t = v.trim();
      if (t && FLOAT_TEXT.test(t) && /[0-9]|inf|nan/i.test(t)) {
        const low = t.toLowerCase().replace(/_/g, "");
        if (low.endsWith("inf") || low.endsWith("infinity")) {
          return low.startsWith("-") ? -Infinity : Infinity;
        }
        if (low.endsWith("nan")) return NaN;
        const x = Number(low);
        if (!Number.isNaN(x)) return x;
      }
      throw fail("ValueError", null, `float() of ${show(v)}`);
    }
    throw fail("TypeError", null, `float() of ${show(v)}`);
  }

  /** Python truthiness. */
  function truthy(v) {
    if (v === null || v === undefined) return false;
    if (typeof v === "boolean") return v;
    if (typeof v === "number") return v !== 0; // NaN is truthy in Python
    if (typeof v === "string" || Array.isArray(v)) return v.length > 0;
    if (typeof v === "object") return Object.keys(v).length > 0;
    return Boolean(v);
  }

  const isNone = (v) => v === null || v === undefined;
  const isDict = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  // Python's max(a, b) / min(a, b): the first argument unless the second compares greater/less
  const pyMax = (a, b) => (b > a ? b : a);
  const pyMin = (a, b) => (b < a ? b : a);

  /** math.log: ValueError for x <= 0 (NaN passes through, as in Python). */
  function mathLog(x) {
    if (x <= 0) throw fail("ValueError", null, "math domain error");
    return Math.log(x);
  }
  function intRound(f, x) {
    if (Number.isNaN(x)) throw fail("ValueError", null, "int() of NaN");
    if (!Number.isFinite(x)) throw fail("OverflowError", null, "int() of infinity");
    return f(x);
  }
  /** Python float ** float (OverflowError instead of inf for finite operands). */
  function floatPow(a, b) {
    const r = Math.pow(a, b);
    if (!Number.isFinite(r) && Number.isFinite(a) && Number.isFinite(b)) {
      throw fail("OverflowError", null, "float ** float out of range");
    }
    return r;
  }
  function divide(a, b) {
    if (b === 0) throw fail("ZeroDivisionError", null, "float division by zero");
    return a / b;
  }

  /** Flatten nested arrays (np.asarray(...).reshape(-1)); a scalar becomes one element. */
  function flat(v) {
    if (!Array.isArray(v)) return [v];
    const out = [];
    const walk = (a) => {
      for (const x of a) {
        if (Array.isArray(x)) walk(x);
        else out.push(x);
      }
    };
    walk(v);
    return out;
  }
  const f64 = (x) => (typeof x === "boolean" ? Number(x) : toFloat(x));

  // ---------------------------------------------------------------------------------------
  // _checks.py
  // ---------------------------------------------------------------------------------------
  const LAYOUTS = C.layouts;

  function checkPositiveInt(name, value) {
    if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
      throw valueError(name, `a positive integer, got ${show(value)}`);
    }
    return value;
  }

  function checkEvenDim(name, value) {
    const v = checkPositiveInt(name, value);
    if (v % 2) throw valueError(name, `even (dimensions come in pairs), got ${v}`);
    return v;
  }

  function checkBase(base) {
    const b = toFloat(base);
    if (!Number.isFinite(b) || b <= 1.0) throw valueError("base", `a finite number > 1, got ${show(base)}`);
    return b;
  }

  function checkLayout(layout) {
    if (!(typeof layout === "string" && LAYOUTS.includes(layout))) {
      throw valueError("layout", `one of ${LAYOUTS.join(", ")}, got ${show(layout)}`);
    }
    return layout;
  }

  function asPositions(positions) {
    if (typeof positions === "number" && Number.isInteger(positions)) {
      const n = checkPositiveInt("positions", positions);
      return Float64Array.from({ length: n }, (_, i) => i);
    }
    const arr = Float64Array.from(flat(positions).map(f64));
    if (arr.length === 0) throw valueError("positions", "empty");
    if (!arr.every(Number.isFinite)) throw valueError("positions", "not all finite");
    return arr;
  }

  // ---------------------------------------------------------------------------------------
  // sinusoidal.py
  // ---------------------------------------------------------------------------------------
  const FREQUENCIES = C.frequencies;

  function checkFrequencies(frequencies) {
    if (!(typeof frequencies === "string" && FREQUENCIES.includes(frequencies))) {
      throw valueError("frequencies", `one of ${FREQUENCIES.join(", ")}, got ${show(frequencies)}`);
    }
    return frequencies;
  }

  /** ω_i = base^(-2i/d) ("paper") or exp(-i·ln(base)/(d/2-1)) ("tensor2tensor"), (d/2,). */
  function pairFrequencies(dModel, base = D.pair_frequencies.base, frequencies = D.pair_frequencies.frequencies) {
    const d = checkEvenDim("d_model", dModel);
    const b = checkBase(base);
    checkFrequencies(frequencies);
    const half = d / 2;
    const out = new Float64Array(half);
    if (frequencies === "paper") {
      for (let i = 0; i < half; i++) out[i] = Math.pow(b, (-2.0 * i) / d);
      return out;
    }
    if (half < 2) {
      throw valueError("d_model", `>= 4 for tensor2tensor frequencies (they divide by d/2-1), got ${d}`);
    }
    const lb = Math.log(b);
    for (let i = 0; i < half; i++) out[i] = Math.exp((-i * lb) / (half - 1));
    return out;
  }

  /** λ_i = 2π/ω_i, (d/2,). */
  function wavelengths(dModel, base = D.wavelengths.base, frequencies = D.wavelengths.frequencies) {
    return Array.from(pairFrequencies(dModel, base, frequencies), (w) => (2.0 * Math.PI) / w);
  }

  /** PE(p, pair i) = (sin(p·ω_i), cos(p·ω_i)), (n, d_model), "interleaved" or "half". */
  function sinusoidalPE(
    positions, dModel, base = D.sinusoidal_pe.base, layout = D.sinusoidal_pe.layout,
    frequencies = D.sinusoidal_pe.frequencies
  ) {
    checkLayout(layout);
    const omega = pairFrequencies(dModel, base, frequencies); // (d/2,)
    const pos = asPositions(positions); // (n,)
    const half = omega.length;
    const rows = [];
    for (const p of pos) {
      const row = new Array(2 * half);
      for (let i = 0; i < half; i++) {
        const a = p * omega[i];
        if (layout === "interleaved") {
          row[2 * i] = Math.sin(a);
          row[2 * i + 1] = Math.cos(a);
        } else {
          row[i] = Math.sin(a);
          row[i + half] = Math.cos(a);
        }
      }
      rows.push(row);
    }
    return rows;
  }

  // ---------------------------------------------------------------------------------------
  // similarity.py
  // ---------------------------------------------------------------------------------------
  /** numpy's pairwise summation of a[lo, lo+n) (the order np.sum / np.mean use). */
  function pairwiseSum(a, lo, n) {
    if (n < 8) {
      let res = -0.0;
      for (let i = 0; i < n; i++) res += a[lo + i];
      return res;
    }
    if (n <= 128) {
      const r = [];
      for (let j = 0; j < 8; j++) r.push(a[lo + j]);
      let i = 8;
      for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += a[lo + i + j];
      let res = r[0] + r[1] + (r[2] + r[3]) + (r[4] + r[5] + (r[6] + r[7]));
      for (; i < n; i++) res += a[lo + i];
      return res;
    }
    let n2 = Math.floor(n / 2);
    n2 -= n2 % 8;
    return pairwiseSum(a, lo, n2) + pairwiseSum(a, lo + n2, n - n2);
  }

  /** f(k) = (1/(d/2)) Σ_i cos(k·ω_i): cosine similarity of PE(p) and PE(p+k). */
  function offsetProfile(offsets, dModel, base = D.offset_profile.base, frequencies = D.offset_profile.frequencies) {
    const omega = pairFrequencies(dModel, base, frequencies); // (d/2,)
    const scalar = !Array.isArray(offsets);
    const k = flat(offsets).map(f64);
    if (!k.every(Number.isFinite)) throw valueError("offsets", "not all finite");
    const half = omega.length;
    const terms = new Float64Array(half);
    const out = k.map((kk) => {
      for (let i = 0; i < half; i++) terms[i] = Math.cos(kk * omega[i]);
      return pairwiseSum(terms, 0, half) / half;
    });
    return scalar ? out[0] : out;
  }

  // ---------------------------------------------------------------------------------------
  // rope_scaling.py
  // ---------------------------------------------------------------------------------------
  const ROPE_TYPES = C.rope_types;
  const REQUIRED_KEYS = C.required_keys; // what each rope_type cannot do without
  const SCALING_KEYS = C.scaling_keys;
  const YARN = C.yarn_defaults; // HF: beta_fast `or 32`, beta_slow `or 1`

  const get = (s, key) => (Object.prototype.hasOwnProperty.call(s, key) && !isNone(s[key]) ? s[key] : null);

  function missing(key, ropeType) {
    return valueError(
      `scaling['${key}']`, `required for rope_type ${ropeType}; required keys: ${REQUIRED_KEYS[ropeType].join(", ")}`
    );
  }

  function positive(name, value) {
    let v;
    try {
      v = toFloat(value);
    } catch (e) {
      throw valueError(name, `a finite number > 0, got ${show(value)}`);
    }
    if (!Number.isFinite(v) || v <= 0.0) {
      throw valueError(name, `a finite number > 0, got ${show(value)}`);
    }
    return v;
  }

  function factorOf(scaling, ropeType) {
    if (get(scaling, "factor") === null) throw missing("factor", ropeType);
    return positive("scaling['factor']", scaling.factor);
  }

  /** L = scaling['original_max_position_embeddings'], else max_position_embeddings (HF). */
  function originalLength(scaling, ropeType, maxPositionEmbeddings) {
    let value = get(scaling, "original_max_position_embeddings");
    if (value === null) value = maxPositionEmbeddings;
    if (isNone(value)) throw missing("original_max_position_embeddings", ropeType);
    return positive("scaling['original_max_position_embeddings']", value);
  }

  /** theta_k = base^(-2k/d) as 1 / base ** (2k/d), k = 0..d/2-1. */
  function defaultInvFreq(dim, base) {
    const out = new Float64Array(dim / 2);
    for (let k = 0; k < dim / 2; k++) out[k] = 1.0 / Math.pow(base, (2 * k) / dim);
    return out;
  }

  /** base' = base * alpha^(d/(d-2)) (needs d > 2). */
  function ntkBase(dim, base, alpha, ropeType) {
    if (dim <= 2) {
      throw valueError("dim", `an even number > 2 for rope_type ${ropeType}, got ${dim}`);
    }
    return base * floatPow(alpha, dim / (dim - 2));
  }

  /** m(s, mscale) = 0.1 * mscale * ln(s) + 1 for s > 1, else 1 (HF get_mscale). */
  function yarnMscale(scale, mscale = 1.0) {
    if (scale <= 1.0) return 1.0;
    return 0.1 * mscale * mathLog(scale) + 1.0;
  }

  /** d * ln(L / (2 pi * rotations)) / (2 ln base). */
  function yarnCorrectionDim(numRotations, dim, base, length) {
    return (dim * mathLog(length / (numRotations * 2 * Math.PI))) / (2 * mathLog(base));
  }

  function yarn(dim, base, scaling, maxPositionEmbeddings) {
    if (!Object.prototype.hasOwnProperty.call(scaling, "factor")) throw missing("factor", "yarn");
    const length = originalLength(scaling, "yarn", maxPositionEmbeddings);
    let factor;
    if (isNone(scaling.factor)) {
      if (isNone(maxPositionEmbeddings)) {
        throw valueError("scaling['factor']", "None for yarn: pass max_position_embeddings or a factor");
      }
      factor = checkPositiveInt("max_position_embeddings", maxPositionEmbeddings) / length;
    } else {
      factor = positive("scaling['factor']", scaling.factor);
    }

    let attentionFactor = get(scaling, "attention_factor");
    if (attentionFactor === null) {
      const mscale = get(scaling, "mscale");
      const mscaleAllDim = get(scaling, "mscale_all_dim");
      if (truthy(mscale) && truthy(mscaleAllDim)) {
        attentionFactor = yarnMscale(factor, toFloat(mscale)) / yarnMscale(factor, toFloat(mscaleAllDim));
      } else {
        attentionFactor = yarnMscale(factor);
      }
    }
    const betaFast = toFloat(truthy(scaling.beta_fast) ? scaling.beta_fast : YARN.beta_fast);
    const betaSlow = toFloat(truthy(scaling.beta_slow) ? scaling.beta_slow : YARN.beta_slow);
    const truncate = Object.prototype.hasOwnProperty.call(scaling, "truncate") ? scaling.truncate : true;

    let low = yarnCorrectionDim(betaFast, dim, base, length);
    let high = yarnCorrectionDim(betaSlow, dim, base, length);
    if (truthy(truncate)) {
      low = intRound(Math.floor, low);
      high = intRound(Math.ceil, high);
    }
    low = pyMax(low, 0);
    high = pyMin(high, dim - 1);
    if (low === high) high += 0.001; // HF: prevent a singular ramp

    const theta = defaultInvFreq(dim, base);
    const out = new Float64Array(dim / 2);
    for (let k = 0; k < dim / 2; k++) {
      const x = (k - low) / (high - low);
      const ramp = Number.isNaN(x) ? NaN : Math.min(Math.max(x, 0.0), 1.0);
      const extrapolation = 1.0 - ramp;
      // inv_freq_k = (1 - g_k) * theta_k / s + g_k * theta_k
      out[k] = (theta[k] / factor) * (1.0 - extrapolation) + theta[k] * extrapolation;
    }
    return [out, toFloat(attentionFactor)];
  }

  function factorList(scaling, key, half) {
    const arr = flat(scaling[key]).map(f64);
    if (arr.length !== half) {
      throw valueError(`scaling['${key}']`, `dim/2 = ${half} entries, got ${arr.length}`);
    }
    if (!arr.every((x) => Number.isFinite(x) && x > 0.0)) {
      throw valueError(`scaling['${key}']`, "finite numbers > 0 only");
    }
    return arr;
  }

  function longrope(dim, base, scaling, seqLen, maxPositionEmbeddings) {
    for (const key of ["short_factor", "long_factor"]) {
      if (get(scaling, key) === null) throw missing(key, "longrope");
    }
    const length = originalLength(scaling, "longrope", maxPositionEmbeddings);
    const short = factorList(scaling, "short_factor", dim / 2);
    const long = factorList(scaling, "long_factor", dim / 2);

    let attentionFactor = get(scaling, "attention_factor");
    if (attentionFactor === null) {
      let factor;
      if (get(scaling, "factor") !== null) {
        factor = positive("scaling['factor']", scaling.factor);
      } else if (!isNone(maxPositionEmbeddings)) {
        factor = checkPositiveInt("max_position_embeddings", maxPositionEmbeddings) / length;
      } else {
        throw valueError("scaling['factor']", "longrope needs it, attention_factor or max_position_embeddings");
      }
      // attention_factor = sqrt(1 + ln s / ln L), or 1 when s <= 1
      attentionFactor = factor <= 1.0 ? 1.0 : Math.sqrt(1 + divide(mathLog(factor), mathLog(length)));
    }
    const ext = truthy(seqLen) && seqLen > length ? long : short; // HF: `if seq_len and ...`
    const out = new Float64Array(dim / 2);
    for (let k = 0; k < dim / 2; k++) out[k] = 1.0 / (ext[k] * Math.pow(base, (2 * k) / dim));
    return [out, toFloat(attentionFactor)];
  }

  function llama3(dim, base, scaling, maxPositionEmbeddings) {
    const factor = factorOf(scaling, "llama3");
    for (const key of ["low_freq_factor", "high_freq_factor"]) {
      if (get(scaling, key) === null) throw missing(key, "llama3");
    }
    const lowFreqFactor = positive("scaling['low_freq_factor']", scaling.low_freq_factor);
    const highFreqFactor = positive("scaling['high_freq_factor']", scaling.high_freq_factor);
    const length = originalLength(scaling, "llama3", maxPositionEmbeddings);
    const lowFreqWavelen = length / lowFreqFactor; // longer wavelengths: divide by s
    const highFreqWavelen = length / highFreqFactor; // shorter wavelengths: keep
    const theta = defaultInvFreq(dim, base);
    const out = new Float64Array(dim / 2);
    for (let k = 0; k < dim / 2; k++) {
      const wavelen = (2 * Math.PI) / theta[k]; // lambda_k
      let v = wavelen > lowFreqWavelen ? theta[k] / factor : theta[k];
      // the smooth band; empty when high_freq_factor <= low_freq_factor (a step, as in HF)
      if (wavelen >= highFreqWavelen && wavelen <= lowFreqWavelen) {
        if (highFreqFactor === lowFreqFactor) {
          throw valueError("scaling['high_freq_factor']", "equals low_freq_factor at a wavelength on the edge (0/0)");
        }
        // a = (L / lambda_k - low_freq_factor) / (high_freq_factor - low_freq_factor)
        const smooth = (length / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
        v = ((1 - smooth) * theta[k]) / factor + smooth * theta[k];
      }
      out[k] = v;
    }
    return [out, 1.0];
  }

  /** RoPE inverse frequencies (dim/2,) and attention factor for an HF rope_parameters dict. */
  function ropeInvFreqArrays(
    dim, base = D.rope_inv_freq.base, scaling = D.rope_inv_freq.scaling, seqLen = D.rope_inv_freq.seq_len,
    maxPositionEmbeddings = D.rope_inv_freq.max_position_embeddings
  ) {
    dim = checkEvenDim("dim", dim);
    scaling = isNone(scaling) ? {} : scaling;
    if (!isDict(scaling)) {
      throw valueError("scaling", `a dict (HF rope_parameters) or None, got ${show(scaling)}`);
    }
    const unknown = Object.keys(scaling).filter((k) => !SCALING_KEYS.includes(k)).sort();
    if (unknown.length) {
      throw valueError(unknown[0], `unknown scaling key; choose from: ${SCALING_KEYS.join(", ")}`);
    }
    const rt = scaling.rope_type, legacy = scaling.type;
    const ropeType = truthy(rt) ? rt : truthy(legacy) ? legacy : "default";
    if (!(typeof ropeType === "string" && ROPE_TYPES.includes(ropeType))) {
      throw valueError("rope_type", `one of ${ROPE_TYPES.join(", ")}, got ${show(ropeType)}`);
    }
    const partial = get(scaling, "partial_rotary_factor");
    if (partial !== null && positive("scaling['partial_rotary_factor']", partial) !== 1.0) {
      throw valueError("partial_rotary_factor", `1 or absent, got ${show(partial)} (pass the rotary dim)`);
    }
    base = checkBase(get(scaling, "rope_theta") !== null ? scaling.rope_theta : base);
    if (!isNone(seqLen)) seqLen = checkPositiveInt("seq_len", seqLen);
    if (!isNone(maxPositionEmbeddings)) {
      maxPositionEmbeddings = checkPositiveInt("max_position_embeddings", maxPositionEmbeddings);
    }

    if (ropeType === "default") return [defaultInvFreq(dim, base), 1.0];
    if (ropeType === "linear") {
      // theta_k / s  (position interpolation: m -> m / s)
      const s = factorOf(scaling, ropeType);
      return [defaultInvFreq(dim, base).map((t) => t / s), 1.0];
    }
    if (ropeType === "ntk") {
      // base' = base * s^(d/(d-2))
      const alpha = factorOf(scaling, ropeType);
      return [defaultInvFreq(dim, ntkBase(dim, base, alpha, ropeType)), 1.0];
    }
    if (ropeType === "dynamic") {
      const factor = factorOf(scaling, ropeType);
      let alpha;
      if (isNone(seqLen)) {
        alpha = 1.0; // HF: seq_len defaults to max_position_embeddings, alpha = 1
      } else if (isNone(maxPositionEmbeddings)) {
        throw valueError("max_position_embeddings", "required for rope_type dynamic with seq_len");
      } else {
        // alpha = s * max(seq_len, M) / M - (s - 1), M = max_position_embeddings
        const length = pyMax(seqLen, maxPositionEmbeddings);
        alpha = (factor * length) / maxPositionEmbeddings - (factor - 1);
      }
      return [defaultInvFreq(dim, ntkBase(dim, base, alpha, ropeType)), 1.0];
    }
    if (ropeType === "yarn") return yarn(dim, base, scaling, maxPositionEmbeddings);
    if (ropeType === "longrope") return longrope(dim, base, scaling, seqLen, maxPositionEmbeddings);
    return llama3(dim, base, scaling, maxPositionEmbeddings);
  }

  function ropeInvFreq(...args) {
    const [invFreq, attentionFactor] = ropeInvFreqArrays(...args);
    return { invFreq: Array.from(invFreq), attentionFactor };
  }

  // ---------------------------------------------------------------------------------------
  // rope_partial.py: partial rotary and Gemma 4's proportional RoPE
  // ---------------------------------------------------------------------------------------
  const HEAD_ROPE_TYPES = C.head_rope_types;
  const PROPORTIONAL_KEYS = C.proportional_keys;
  function fraction(name, value) {
    let v = NaN;
    try { v = toFloat(value); } catch (e) { /* same message below */ }
    if (!(v > 0 && v <= 1)) throw valueError(name, `a number in (0, 1], got ${show(value)}`);
    return v;
  }
  /** Rotated slots d = int(head_dim * p), even and >= 2. */
  function rotaryDim(headDim, partialRotaryFactor = 1.0) {
    headDim = checkPositiveInt("head_dim", headDim);
    const p = fraction("partial_rotary_factor", partialRotaryFactor);
    const d = Math.trunc(headDim * p);
    if (d < 2 || d % 2) {
      throw valueError("partial_rotary_factor", `int(${headDim} * ${p}) = ${d} rotated slots: not an even number >= 2`);
    }
    return d;
  }
  /** Turning pairs of proportional RoPE: r = int(p * head_dim // 2). */
  function proportionalPairs(headDim, partialRotaryFactor) {
    headDim = checkPositiveInt("head_dim", headDim);
    const p = fraction("partial_rotary_factor", partialRotaryFactor);
    const r = Math.floor((p * headDim) / 2);
    if (r < 1) throw valueError("partial_rotary_factor", `${p} of head_dim ${headDim} turns no pair`);
    return r;
  }
  /** theta_k = base^(-2k/head_dim) / factor for k < r, 0 beyond; (head_dim/2,). */
  function proportionalInvFreq(headDim, base, partialRotaryFactor = 1.0, factor = 1.0) {
    const r = proportionalPairs(headDim, partialRotaryFactor);
    if (headDim % 2) throw valueError("head_dim", `even for proportional RoPE, got ${headDim}`);
    const out = new Float64Array(headDim / 2);
    out.set(ropeInvFreqArrays(headDim, base, { rope_type: "linear", factor })[0].subarray(0, r));
    return out;
  }
  /** What a transformers rotary module holds for one head: [inv_freq, attention factor]. */
  function headInvFreqArrays(
    headDim, parameters, maxPositionEmbeddings = D.head_inv_freq.max_position_embeddings,
    seqLen = D.head_inv_freq.seq_len, partialInDefault = D.head_inv_freq.partial_in_default
  ) {
    headDim = checkPositiveInt("head_dim", headDim);
    const params = { ...parameters };
    const ropeType = truthy(params.rope_type) ? params.rope_type : truthy(params.type) ? params.type : "default";
    if (!(typeof ropeType === "string" && HEAD_ROPE_TYPES.includes(ropeType))) {
      throw valueError("rope_type", `one of ${HEAD_ROPE_TYPES.join(", ")}, got ${show(ropeType)}`);
    }
    let partial = params.partial_rotary_factor;
    delete params.partial_rotary_factor;
    partial = isNone(partial) ? 1.0 : fraction("partial_rotary_factor", partial);
    if (isNone(params.rope_theta)) throw valueError("parameters['rope_theta']", "required");
    if (ropeType === "proportional") {
      const unknown = Object.keys(params).filter((k) => !PROPORTIONAL_KEYS.includes(k)).sort();
      if (unknown.length) throw valueError(unknown[0], "not a key of rope_type proportional");
      return [proportionalInvFreq(headDim, toFloat(params.rope_theta), partial, isNone(params.factor) ? 1.0 : params.factor), 1.0];
    }
    if (ropeType === "default" && !partialInDefault) partial = 1.0;
    return ropeInvFreqArrays(rotaryDim(headDim, partial), D.rope_inv_freq.base, params, seqLen, maxPositionEmbeddings);
  }
  function headInvFreq(...args) {
    const [invFreq, attentionFactor] = headInvFreqArrays(...args);
    return { invFreq: Array.from(invFreq), attentionFactor };
  }

  // ---------------------------------------------------------------------------------------
  // alibi.py
  // ---------------------------------------------------------------------------------------
  /** m_h = 2^(-B·h/n) for n a power of two; otherwise MPT's / BLOOM's interleaving rule. */
  function alibiSlopes(nHeads, maxBias = D.alibi_slopes.max_bias) {
    const n = checkPositiveInt("n_heads", nHeads);
    const mb = typeof maxBias === "boolean" ? Number(maxBias) : maxBias;
    if (typeof mb !== "number") {
      throw fail("TypeError", null, `math.isfinite() of ${show(maxBias)}`);
    }
    if (!(Number.isFinite(mb) && mb > 0)) {
      throw valueError("max_bias", `a positive finite number, got ${show(maxBias)}`);
    }
    let big = 1;
    while (big < n) big *= 2; // 2 ** ceil(log2(n))
    const s = [];
    for (let h = 1; h <= big; h++) s.push(Math.pow(2.0, (-mb * h) / big));
    if (big === n) return s;
    const evenH = s.filter((_, i) => i % 2 === 1); // s[1::2]
    const oddH = s.filter((_, i) => i % 2 === 0); // s[0::2]
    return evenH.concat(oddH).slice(0, n);
  }

  // ---------------------------------------------------------------------------------------
  // buckets.py: float32 arithmetic, correctly rounded float32 logarithm
  // ---------------------------------------------------------------------------------------
  const fr = Math.fround;
  const LOG_BAND = C.log_band; // Math.log (fdlibm in V8, < 1 ulp) is far inside this band

  // ln x with BigInt fixed point (LN_BITS fraction bits), for the rare x whose float32 rounding
  // the float64 Math.log cannot settle: x = M·2^E, ln x = (E + 52)·ln 2 + 2·atanh((M - 2^52) /
  // (M + 2^52)) with M in [2^52, 2^53); each series term is truncated (error < 1 unit each).
  const LN_BITS = 192n;
  const F64B = new Float64Array(1);
  const U64B = new BigUint64Array(F64B.buffer);
  function decompose(d) {
    // d > 0 finite -> [M, E] with d = M·2^E exactly, M a BigInt
    F64B[0] = d;
    const bits = U64B[0];
    const be = Number((bits >> 52n) & 0x7ffn);
    const m = bits & ((1n << 52n) - 1n);
    return be === 0 ? [m, -1074] : [m | (1n << 52n), be - 1075];
  }
  function fixedOf(d) {
    // a double as an exact fixed-point BigInt (its bits sit well above 2^-LN_BITS here)
    if (d === 0) return 0n;
    const [m, e] = decompose(Math.abs(d));
    const shift = BigInt(e) + LN_BITS;
    const v = shift >= 0n ? m << shift : m >> -shift;
    return d < 0 ? -v : v;
  }
  function atanhFixed(num, den) {
    // atanh(num/den)·2^LN_BITS for 0 <= num/den <= 1/3
    let term = (num << LN_BITS) / den;
    const n2 = num * num;
    const d2 = den * den;
    let sum = 0n;
    for (let k = 1n; term !== 0n; k += 2n) {
      sum += term / k;
      term = (term * n2) / d2;
    }
    return sum;
  }
  const LN2_FIXED = 2n * atanhFixed(1n, 3n);
  function lnFixed(x) {
    let [m, e] = decompose(x);
    while (m < 1n << 52n) {
      m <<= 1n; // subnormal: normalise
      e -= 1;
    }
    const top = 1n << 52n;
    return BigInt(e + 52) * LN2_FIXED + 2n * atanhFixed(m - top, m + top);
  }
  const F32 = new Float32Array(1);
  const U32 = new Uint32Array(F32.buffer);
  function nextUp32(x) {
    F32[0] = x;
    if (x >= 0) U32[0] += 1;
    else U32[0] -= 1;
    return F32[0];
  }
  function nextDown32(x) {
    F32[0] = x;
    if (x > 0) U32[0] -= 1;
    else U32[0] += 1;
    return F32[0];
  }

  /** The float32 nearest to lnFixed(x), among fround(Math.log(x)) and its two neighbours. */
  function logf32Exact(x) {
    const r = fr(Math.log(x));
    const exact = lnFixed(x);
    let best = r;
    let bestDist = -1n;
    for (const c of [nextDown32(r), r, nextUp32(r)]) {
      let dist = exact - fixedOf(c);
      if (dist < 0n) dist = -dist;
      if (bestDist < 0n || dist < bestDist) {
        best = c;
        bestDist = dist;
      }
    }
    return best;
  }

  /** ln x correctly rounded to float32 (posecards.encodings.buckets.log_float32), for x > 0:
   * Math.log in float64 then Math.fround, unless ln x may lie within LOG_BAND of a point halfway
   * between two float32s; then the nearest float32 is chosen with the exact lnFixed. */
  function logf32(x) {
    if (!(x > 0) || !Number.isFinite(x)) throw valueError("log_float32", "takes finite positive numbers");
    const y = Math.log(x);
    const lo = fr(y * (1 - LOG_BAND));
    const hi = fr(y * (1 + LOG_BAND));
    return lo === hi ? fr(y) : logf32Exact(x);
  }

  function asIntPositions(name, relativePosition) {
    const scalar = !Array.isArray(relativePosition);
    const r = flat(relativePosition).map((v) => (typeof v === "boolean" ? Number(v) : v));
    for (const v of r) {
      if (typeof v !== "number" || !Number.isFinite(v) || !Number.isInteger(v)) {
        throw valueError(name, "whole numbers only");
      }
    }
    return [r, scalar];
  }

  /** T5's _relative_position_bucket; relative_position = key - query. */
  function t5RelativeBucket(
    relativePositions, bidirectional = D.t5_relative_bucket.bidirectional,
    numBuckets = D.t5_relative_bucket.num_buckets, maxDistance = D.t5_relative_bucket.max_distance
  ) {
    const [r, scalar] = asIntPositions("relative_position", relativePositions);
    let nb = checkPositiveInt("num_buckets", numBuckets);
    const md = checkPositiveInt("max_distance", maxDistance);
    const bidir = truthy(bidirectional);
    if (bidir) nb = Math.floor(nb / 2);
    const maxExact = Math.floor(nb / 2);
    if (maxExact < 1) throw valueError("num_buckets", `>= ${bidir ? 4 : 2}, got ${numBuckets}`);
    if (md <= maxExact) {
      throw valueError("max_distance", `> the ${maxExact} exact buckets, got ${maxDistance}`);
    }
    const meF = fr(maxExact);
    const denom = logf32(md / maxExact); // log_float32(md / max_exact)
    const width = fr(nb - maxExact);
    const out = r.map((rv) => {
      const offset = bidir && rv > 0 ? nb : 0;
      const n = bidir ? Math.abs(rv) : -Math.min(rv, 0);
      if (n < maxExact) return offset + n;
      const safe = fr(Math.max(n, maxExact));
      const scaled = fr(fr(logf32(fr(safe / meF)) / denom) * width);
      return offset + Math.min(maxExact + Math.trunc(scaled), nb - 1);
    });
    return scalar ? out[0] : out;
  }

  /** DeBERTa-v2's make_log_bucket_position; relative_position = query - key. */
  function debertaLogBucket(relativePositions, bucketSize, maxPosition) {
    const [r, scalar] = asIntPositions("relative_position", relativePositions);
    const bs = checkPositiveInt("bucket_size", bucketSize);
    const mp = checkPositiveInt("max_position", maxPosition);
    const mid = Math.floor(bs / 2);
    if (mid < 1) throw valueError("bucket_size", `>= 2, got ${bucketSize}`);
    if (mp - 1 <= mid) {
      throw valueError("max_position", `> bucket_size/2 + 1 = ${mid + 1}, got ${maxPosition}`);
    }
    const midF = fr(mid);
    const denom = logf32(fr((mp - 1) / mid));
    const width = fr(mid - 1);
    const out = r.map((rv) => {
      const abs = Math.abs(rv);
      if (abs <= mid) return rv;
      const safe = fr(Math.max(abs, mid));
      const logPos = Math.ceil(fr(fr(logf32(fr(safe / midF)) / denom) * width)) + mid;
      return logPos * Math.sign(rv);
    });
    return scalar ? out[0] : out;
  }

  // ---------------------------------------------------------------------------------------
  // unseen_angles.py
  // ---------------------------------------------------------------------------------------
  const TWO_PI = 2.0 * Math.PI;

  /** min(2 pi, theta_k (length - 1)): the arc pair k reaches over a context of length tokens. */
  function angleReach(invFreq, length) {
    const theta = flat(invFreq).map(f64); // (pairs,)
    if (!Array.isArray(invFreq) || !theta.every((x) => Number.isFinite(x) && x >= 0)) {
      throw valueError("inv_freq", "a 1-D array of finite frequencies >= 0");
    }
    const n = checkPositiveInt("length", length);
    return theta.map((x) => Math.min(TWO_PI, x * (n - 1)));
  }

  /** max(0, reach_test - reach_train) per pair, radians: the angles never reached in training. */
  function unseenAngles(invFreqTrain, invFreqTest, trainLength, testLength) {
    const train = angleReach(invFreqTrain, trainLength); // (pairs,)
    const test = angleReach(invFreqTest, testLength); // (pairs,)
    if (train.length !== test.length) {
      throw valueError("inv_freq_train", `${train.length} pairs vs ${test.length} of inv_freq_test`);
    }
    return test.map((x, k) => Math.max(0.0, x - train[k]));
  }

  // ---------------------------------------------------------------------------------------
  // mrope.py: which axis (0 t, 1 h, 2 w) drives each frequency of a text head
  // ---------------------------------------------------------------------------------------
  const MROPE_LAYOUTS = C.mrope_layouts;
  function mropeSection(section, nFreq) {
    const ok = Array.isArray(section) && section.length === 3 &&
      section.every((v) => typeof v === "number" && Number.isInteger(v) && v >= 0);
    if (!ok) throw valueError("mrope_section", `three integers >= 0 (t, h, w), got ${show(section)}`);
    const sum = section[0] + section[1] + section[2];
    if (sum !== nFreq) throw valueError("mrope_section", `sums to ${sum}, not head_dim/2 = ${nFreq}`);
    return section;
  }
  /** chunked (Qwen2-VL, 2.5-VL): t for j < s_t, h below s_t + s_h, then w; interleaved
   * (Qwen3-VL): t, then h at j = 1, 4, 7, ... < 3 s_h and w at j = 2, 5, 8, ... < 3 s_w. (n_freq,) */
  function mropeAxes(section, nFreq, layout = D.mrope_axes.layout) {
    const n = checkPositiveInt("n_freq", nFreq);
    if (!(typeof layout === "string" && MROPE_LAYOUTS.includes(layout))) {
      throw valueError("layout", `one of ${MROPE_LAYOUTS.join(", ")}, got ${show(layout)}`);
    }
    const [st, sh, sw] = mropeSection(section, n);
    const out = new Array(n);
    for (let j = 0; j < n; j++) {
      if (layout === "chunked") out[j] = j < st ? 0 : j < st + sh ? 1 : 2;
      else out[j] = j % 3 === 1 && j < 3 * sh ? 1 : j % 3 === 2 && j < 3 * sw ? 2 : 0;
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------
  // rope_2d.py: 2-D RoPE of vision encoders, pair p -> slots, axis (0 h, 1 w), frequency
  // ---------------------------------------------------------------------------------------
  const CONVENTIONS = C.vision_conventions;
  function visionCheck(convention, headDim) {
    if (!(typeof convention === "string" && CONVENTIONS.includes(convention))) {
      throw valueError("convention", `one of ${CONVENTIONS.join(", ")}, got ${show(convention)}`);
    }
    const d = checkPositiveInt("head_dim", headDim);
    if (d % 4) throw valueError("head_dim", `divisible by 4 (two axes x pairs), got ${d}`);
    return d;
  }
  /** f_j = b^(-4j/d), j < d/4; axial: pair p on h (p < d/4) or w, slots (p, p + d/2);
   * even_odd: h the even, w the odd of b^(-2k/d); half_per_axis: [h | w] halves, each its own
   * rotate_half; normalised: 2π f_j on a coordinate in [-1, 1]. Each field (d/2,). */
  function visionRopePairs(convention, headDim, base) {
    const d = visionCheck(convention, headDim);
    const b = checkBase(base);
    const q = d / 4, half = d / 2;
    const first = [], second = [], axis = [], freq = [];
    for (let p = 0; p < half; p++) {
      const ax = p < q ? 0 : 1, j = p % q;
      axis.push(ax);
      let f = Math.pow(b, -(2 * j) / half);
      if (convention === "even_odd") f = Math.pow(b, -(2 * (2 * j + ax)) / d);
      if (convention === "normalised") f = 2 * Math.PI * f;
      freq.push(f);
      first.push(convention === "half_per_axis" ? ax * half + j : p);
      second.push(convention === "half_per_axis" ? ax * half + j + q : p + half);
    }
    return { first, second, axis, freq, normalised: convention === "normalised" };
  }
  /** How far each pair turns for one step along `axis` (0 down, 1 right) on a grid of `grid`
   * patches per side (normalised: a step is 2/grid of the coordinate); 0 off that axis, (d/2,) */
  function stepAngles(convention, headDim, base, axis, grid) {
    const pairs = visionRopePairs(convention, headDim, base);
    const step = pairs.normalised ? 2.0 / checkPositiveInt("grid", grid) : 1.0;
    return pairs.axis.map((a, p) => (a === axis ? pairs.freq[p] * step : 0.0));
  }

  // ---------------------------------------------------------------------------------------
  // critical_dim.py (Liu et al. 2024) and rope_base_bound.py (Men et al. 2024): card 10
  // ---------------------------------------------------------------------------------------
  /** pairs whose period 2π/θ_i fits in the context: they complete a turn */
  function turningPairs(headDim, base, context) {
    const [inv] = ropeInvFreqArrays(checkEvenDim("head_dim", headDim), checkBase(base));
    const n = checkPositiveInt("context", context);
    let count = 0;
    for (const x of inv) if ((2.0 * Math.PI) / x <= n) count++;
    return count;
  }
  /** d_extra = 2 ceil((d/2) log_b(T / 2π)), clipped to [0, d] */
  function criticalDimension(headDim, base, context) {
    const d = checkEvenDim("head_dim", headDim);
    let x = (d / 2) * Math.log(checkPositiveInt("context", context) / (2 * Math.PI));
    x /= Math.log(checkBase(base));
    return Math.min(d, Math.max(0, 2 * Math.ceil(x)));
  }
  /** T_extra = 2π b^(d_extra / d) */
  function extrapolationBound(headDim, base, context) {
    const d = checkEvenDim("head_dim", headDim);
    return 2 * Math.PI * Math.pow(checkBase(base), criticalDimension(d, base, context) / d);
  }
  /** B(m) = Σ_i cos(m θ_i) at each distance, θ from rope_inv_freq */
  function cosSum(distances, headDim, base) {
    const [inv] = ropeInvFreqArrays(checkEvenDim("head_dim", headDim), checkBase(base));
    const one = (m) => {
      const v = toFloat(m);
      let acc = 0;
      for (const x of inv) acc += Math.cos(v * x);
      return acc;
    };
    return Array.isArray(distances) ? distances.map(one) : one(distances);
  }
  /** the smallest 0 <= m < context with B(m) < 0, or null (the base holds) */
  function firstNegativeOf(n, inv) {
    // cos and sin of m·θ_i turned one step at a time (angle addition), afresh every 64th m
    const h = inv.length, C = new Float64Array(h), S = new Float64Array(h);
    const CW = inv.map(Math.cos), SW = inv.map(Math.sin);
    for (let m = 0; m < n; m++) {
      let acc = 0;
      if ((m & 63) === 0) {
        for (let i = 0; i < h; i++) {
          C[i] = Math.cos(m * inv[i]);
          S[i] = Math.sin(m * inv[i]);
        }
      }
      for (let i = 0; i < h; i++) {
        const c = C[i];
        acc += c;
        C[i] = c * CW[i] - S[i] * SW[i];
        S[i] = S[i] * CW[i] + c * SW[i];
      }
      if (acc < 0.0) return m;
    }
    return null;
  }
  function firstNegative(context, headDim, base) {
    const n = checkPositiveInt("context", context);
    const [inv] = ropeInvFreqArrays(checkEvenDim("head_dim", headDim), checkBase(base));
    return firstNegativeOf(n, inv);
  }
  /** The smallest base keeping B(m) >= 0 over the context: the first base of the scan
   * low · GRID_RATIO^j that holds (θ = b^(-2k/d) as the scan forms it), then bisection on ln b
   * between it and the one before (base_holds) to rel_tol. A generator: it yields the share of
   * the scan done after every base (the page runs it in slices), and returns the base. */
  function* smallestBaseSearch(context, headDim, low = D.smallest_base.low, high = D.smallest_base.high,
    relTol = D.smallest_base.rel_tol) {
    const n = checkPositiveInt("context", context);
    const d = checkEvenDim("head_dim", headDim);
    const holds = (b) => firstNegative(n, d, b) === null;
    if (holds(low)) return toFloat(low);
    const steps = Math.ceil(Math.log(high / low) / Math.log(C.grid_ratio));
    const grid = (j) => low * Math.pow(C.grid_ratio, j);
    let found = null;
    const theta = new Float64Array(d / 2);
    for (let j = 0; j <= steps && found === null; j++) {
      const b = grid(j);
      for (let k = 0; k < d / 2; k++) theta[k] = Math.pow(b, (-2.0 * k) / d);
      if (firstNegativeOf(n, theta) === null) found = j;
      yield j / steps;
    }
    if (found === null || found === 0) {
      throw valueError(null, `no base up to ${high} keeps B(m) >= 0 over ${context} tokens`);
    }
    let lo = Math.log(grid(found - 1)), hi = Math.log(grid(found));
    while (hi - lo > relTol) {
      const mid = 0.5 * (lo + hi);
      if (holds(Math.exp(mid))) hi = mid;
      else lo = mid;
      yield 1;
    }
    return Math.exp(hi);
  }
  function smallestBase(...a) {
    const it = smallestBaseSearch(...a);
    for (;;) {
      const r = it.next();
      if (r.done) return r.value;
    }
  }

  // ---------------------------------------------------------------------------------------
  // seeded.py (mulberry32's integers exactly, Box–Muller to 1e-12) and score_terms.py's seeded example
  // ---------------------------------------------------------------------------------------
  const SEEDS = C.seeds; // seeds are 0 .. 2³² − 1
  function checkSeed(seed) {
    if (typeof seed !== "number" || !Number.isInteger(seed) || seed < 0 || seed >= SEEDS) {
      throw valueError("seed", `an integer in [0, 2**32), got ${show(seed)}`);
    }
    return seed;
  }
  /** mulberry32's first `count` outputs from `seed`: the k-th hashes a_k = seed + k·step mod 2³². */
  function mulberry32(seed, count) {
    let a = checkSeed(seed) | 0;
    const out = new Uint32Array(checkPositiveInt("count", count));
    for (let k = 0; k < out.length; k++) {
      a = (a + C.seed_step) | 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      out[k] = (t ^ (t >>> 14)) >>> 0;
    }
    return out;
  }
  /** Box–Muller on pairs (u, v): √(−2 ln(1 − u/2³²))·(cos, sin)(2π v/2³²), (count,). */
  function seededNormals(seed, count) {
    const n = checkPositiveInt("count", count);
    const u = mulberry32(seed, 2 * Math.floor((n + 1) / 2));
    const z = new Float64Array(u.length);
    for (let k = 0; k < u.length; k += 2) {
      const r = Math.sqrt(-2.0 * Math.log(1.0 - u[k] / SEEDS)), a = 2.0 * Math.PI * (u[k + 1] / SEEDS);
      z[k] = r * Math.cos(a);
      z[k + 1] = r * Math.sin(a);
    }
    return z.subarray(0, n);
  }
  /** a (rows, inner) @ b (inner, cols), both flat row-major: (rows, cols). */
  function matmul(a, b, rows, inner, cols) {
    const out = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++) {
      for (let k = 0; k < inner; k++) {
        const x = a[i * inner + k], o = i * cols, bk = k * cols;
        for (let j = 0; j < cols; j++) out[o + j] += x * b[bk + j];
      }
    }
    return out;
  }
  /** q (n, h) @ k (n, h)ᵀ: (n, n). */
  function gram(q, k, n, h) {
    const out = new Float64Array(n * n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        let acc = 0;
        for (let c = 0; c < h; c++) acc += q[i * h + c] * k[j * h + c];
        out[i * n + j] = acc;
      }
    }
    return out;
  }
  /** score_terms.seeded_score_terms: x = content_rms·z (n, d), sinusoids p (n, d), W_q, W_k =
   * z/√d (d, d_head), one stream in that order; the four (n, n) terms cc, cp, pc, pp (flat,
   * row-major) and each one's rms. `draw` caches the projections of the content (same n, d,
   * d_head, seed and content_rms: only p's are recomputed). */
  function seededTermsArrays(nTokens, dModel, dHead, base, seed, contentRms, draw = {}) {
    const n = checkPositiveInt("n_tokens", nTokens);
    const dh = checkPositiveInt("d_head", dHead);
    const c = positive("content_rms", contentRms);
    const pe = sinusoidalPE(n, dModel, base); // (n, d) as sinusoidal_pe; checks d_model and base
    const d = pe[0].length;
    const key = `${n}|${d}|${dh}|${seed}|${c}`;
    if (draw.key !== key) {
      const z = seededNormals(seed, n * d + 2 * d * dh);
      const x = z.slice(0, n * d).map((v) => v * c); // (n, d)
      const s = Math.sqrt(d);
      const wq = z.slice(n * d, n * d + d * dh).map((v) => v / s); // (d, d_head)
      const wk = z.slice(n * d + d * dh).map((v) => v / s); // (d, d_head)
      Object.assign(draw, { key, wq, wk, qx: matmul(x, wq, n, d, dh), kx: matmul(x, wk, n, d, dh) });
    }
    const p = Float64Array.from(pe.flat()); // (n, d) flat, row-major
    const qp = matmul(p, draw.wq, n, d, dh), kp = matmul(p, draw.wk, n, d, dh); // (n, d_head)
    const terms = [[draw.qx, draw.kx], [draw.qx, kp], [qp, draw.kx], [qp, kp]].map(([q, k]) => gram(q, k, n, dh));
    const rms = terms.map((m) => Math.sqrt(pairwiseSum(m.map((v) => v * v), 0, m.length) / m.length));
    return { terms, rms, n };
  }
  function seededScoreTerms(...a) {
    const { terms: [cc, cp, pc, pp], rms } = seededTermsArrays(...a.slice(0, 6));
    return { cc, cp, pc, pp, rms };
  }

  // ---------------------------------------------------------------------------------------
  // what the page draws with (checked against sinusoidal_pe, offset_profile and alibi_bias)
  // ---------------------------------------------------------------------------------------
  /** sin(p·ω_i), cos(p·ω_i) of the sorted positions `rows` (rows, d) interleaved, and
   * fsum[k] = Σ_i cos(k·ω_i) for k < n (so f(k) = fsum[k] / (d/2)): each step rotates the
   * previous one (angle addition), every 64th is computed afresh. For drawing only. */
  function peTable(d, base, n, rows) {
    const omega = pairFrequencies(d, base);
    n = checkPositiveInt("positions", n);
    const half = omega.length, nr = rows.length;
    const pe = new Float64Array(nr * d); // (rows, d): sin at 2i, cos at 2i+1
    const fsum = new Float64Array(n);
    // position-outer: every pair's (cos, sin) at p in contiguous (half,) arrays, turned by ω_i
    const C = new Float64Array(half), S = new Float64Array(half);
    const CW = new Float64Array(half), SW = new Float64Array(half);
    for (let i = 0; i < half; i++) {
      CW[i] = Math.cos(omega[i]);
      SW[i] = Math.sin(omega[i]);
    }
    let r = 0;
    for (let p = 0; p < n; p++) {
      if ((p & 63) === 0) {
        for (let i = 0; i < half; i++) {
          C[i] = Math.cos(p * omega[i]);
          S[i] = Math.sin(p * omega[i]);
        }
      }
      let acc = 0;
      for (let i = 0; i < half; i++) acc += C[i];
      fsum[p] = acc;
      if (r < nr && rows[r] === p) {
        const o = r * d;
        for (let i = 0; i < half; i++) {
          pe[o + 2 * i] = S[i];
          pe[o + 2 * i + 1] = C[i];
        }
        for (r++; r < nr && rows[r] === p; r++) pe.copyWithin(r * d, o, o + d);
      }
      for (let i = 0; i < half; i++) {
        const c = C[i], sn = S[i];
        C[i] = c * CW[i] - sn * SW[i];
        S[i] = sn * CW[i] + c * SW[i];
      }
    }
    return { pe, fsum, half, n };
  }

  /** The last query (i = n - 1) over keys j = 0..i of equal content under ALiBi slope m:
   * softmax_j(-m (i - j)), by distance δ = i - j: w_δ = exp(-m δ) / Σ exp(-m δ'), (n,). */
  function alibiWeights(m, n) {
    n = checkPositiveInt("length", n);
    const w = new Float64Array(n);
    let z = 0;
    for (let dd = 0; dd < n; dd++) z += w[dd] = Math.exp(-m * dd);
    for (let dd = 0; dd < n; dd++) w[dd] /= z;
    return w;
  }

  // ---------------------------------------------------------------------------------------
  // formatting.py: numbers as the cards print them (Python's exact round-half-even)
  // ---------------------------------------------------------------------------------------
  const MINUS = "\u2212";
  const minus = (s) => (s.startsWith("-") ? MINUS + s.slice(1) : s);

  /** f"{x:.{n}f}" for n >= 0, the digits of round(x, n) for n < 0: x rounded at 10^-n, half to
   * even, decided on x's exact value: x = M·2^E is M·5^-E / 10^-E, all of its decimal digits. */
  function fixed(x, n) {
    F64B[0] = Math.abs(x);
    const bits = U64B[0];
    const be = Number((bits >> 52n) & 0x7ffn);
    const m = be === 0 ? bits & ((1n << 52n) - 1n) : (bits & ((1n << 52n) - 1n)) | (1n << 52n);
    const e = be === 0 ? -1074 : be - 1075; // |x| = m·2^e
    let ip, fp;
    if (e >= 0) {
      ip = (m << BigInt(e)).toString();
      fp = "";
    } else {
      const all = (m * 5n ** BigInt(-e)).toString().padStart(-e + 1, "0");
      ip = all.slice(0, all.length + e);
      fp = all.slice(all.length + e);
    }
    const digits = ip + fp.padEnd(n + 1, "0");
    const cut = ip.length + n; // keep digits[0, cut): the value in units of 10^-n
    let kept = "0";
    if (cut >= 0) {
      kept = digits.slice(0, cut) || "0";
      const rest = digits.slice(cut);
      const first = rest.charCodeAt(0) - 48;
      const odd = (kept.charCodeAt(kept.length - 1) - 48) % 2 === 1;
      if (first > 5 || (first === 5 && (/[1-9]/.test(rest.slice(1)) || odd))) {
        const arr = kept.split("").map(Number);
        let i = arr.length - 1;
        for (; i >= 0 && arr[i] === 9; i--) arr[i] = 0;
        if (i < 0) arr.unshift(1);
        else arr[i] += 1;
        kept = arr.join("");
      }
    }
    let text;
    if (n > 0) {
      const k = kept.padStart(n + 1, "0");
      text = k.slice(0, -n) + "." + k.slice(-n);
    } else {
      text = kept + "0".repeat(-n);
    }
    text = text.replace(/^0+(?=\d)/, "");
    return x < 0 || Object.is(x, -0) ? "-" + text : text;
  }
  const grouped = (s) => s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");

  /** num(0.98765, 2) -> "0.99"; negative zero prints as 0. */
  function num(value, digits = D.num.digits) {
    const s = fixed(toFloat(value), digits);
    return s.startsWith("-") && Number(s) === 0 ? s.slice(1) : minus(s);
  }
  /** Thousands separators: 131072 -> "131,072" (round half to even). */
  function group(value) {
    const s = fixed(toFloat(value), 0); // round() to an int: no negative zero
    return minus(s === "-0" ? "0" : s).replace(/\d+/, grouped);
  }
  /** Significant digits: sig(62831.85) -> "62,800", sig(0.0123) -> "0.0123". */
  function sig(value, digits = D.sig.digits) {
    const v = toFloat(value);
    if (v === 0) return "0";
    const exp = Math.floor(Math.log10(Math.abs(v)));
    const places = digits - 1 - exp;
    const rounded = Number(fixed(v, places));
    if (Math.abs(rounded) >= 1000) return group(rounded);
    return minus(fixed(rounded, Math.max(0, places)));
  }

  const api = {
    pairFrequencies: (...a) => Array.from(pairFrequencies(...a)),
    sinusoidalPE,
    offsetProfile,
    wavelengths,
    ropeInvFreq,
    headInvFreq,
    rotaryDim,
    proportionalPairs,
    proportionalInvFreq: (...a) => Array.from(proportionalInvFreq(...a)),
    alibiSlopes,
    alibiWeights: (...a) => Array.from(alibiWeights(...a)),
    peTable: (...a) => {
      const t = peTable(...a);
      return { pe: Array.from(t.pe), fsum: Array.from(t.fsum) };
    },
    angleReach,
    unseenAngles,
    mropeAxes,
    visionRopePairs,
    stepAngles,
    turningPairs,
    criticalDimension,
    extrapolationBound,
    cosSum,
    firstNegative,
    smallestBase,
    mulberry32: (...a) => Array.from(mulberry32(...a)),
    seededNormals: (...a) => Array.from(seededNormals(...a)),
    seededScoreTerms,
    t5RelativeBucket,
    debertaLogBucket,
    num,
    sig,
    group,
  };
  return Object.freeze({
    ...api,
    ROPE_TYPES: Object.freeze(ROPE_TYPES.slice()),
    SCALING_KEYS: Object.freeze(SCALING_KEYS.slice()),
    HEAD_ROPE_TYPES: Object.freeze(HEAD_ROPE_TYPES.slice()),
    // the typed arrays the page draws from, and internals the tests use
    _internal: Object.freeze({
      pairFrequencies, ropeInvFreqArrays, peTable, alibiWeights, logf32, logf32Exact, MINUS,
      smallestBaseSearch, seededTermsArrays,
    }),
  });
}
