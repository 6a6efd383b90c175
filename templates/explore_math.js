/* posecards explorer: the math layer in JavaScript (window.posecards).
 *
 * A line-by-line mirror of posecards/encodings (sinusoidal.py, similarity.py, rope_scaling.py,
 * alibi.py, buckets.py): same names (camelCase), same defaults, same Hugging Face
 * rope_parameters keys, same order of argument checks and the same ValueError messages (thrown
 * as an Error named "ValueError"). JS numbers are IEEE float64 like np.float64.
 *
 * Conventions where JS cannot tell Python types apart: a whole number passed where Python
 * takes an int (dims, head counts, lengths) is that int; where Python takes a float (base,
 * factors) it is printed in messages as Python prints a float (10000 -> "10000.0").
 *
 * The bucket functions reproduce, as the Python does, the float32 arithmetic of the reference
 * implementations (Math.fround after each operation); their float32 logarithm is the correctly
 * rounded one, as in buckets.py (Math.log in float64, rounded by Math.fround, with an exact
 * BigInt logarithm where that rounding is not settled), so the page gives the buckets Python
 * gives on every CPU.
 */
(function (root) {
  "use strict";

  // ---------------------------------------------------------------------------------------
  // Python-compatible conversions and reprs (for identical error messages)
  // ---------------------------------------------------------------------------------------
  function valueError(message) {
    const e = new Error(message);
    e.name = "ValueError";
    return e;
  }
  function typeError(message) {
    const e = new Error(message);
    e.name = "TypeError";
    return e;
  }

  /** repr() of a Python float: shortest round-trip digits, '1e+16' / '1e-05' style. */
  function floatRepr(x) {
    if (Number.isNaN(x)) return "nan";
    if (x === Infinity) return "inf";
    if (x === -Infinity) return "-inf";
    if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
    const sign = x < 0 ? "-" : "";
    const [m, e] = Math.abs(x).toExponential().split("e");
    const digits = m.replace(".", "");
    const exp = parseInt(e, 10);
    let body;
    if (exp >= -4 && exp < 16) {
      if (exp >= 0) {
        const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
        const frac = digits.slice(exp + 1) || "0";
        body = intPart + "." + frac;
      } else {
        body = "0." + "0".repeat(-exp - 1) + digits;
      }
    }
    if (!body) {
      const mant = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
      body = mant + "e" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0");
    }
    return sign + body;
  }

  function strRepr(s) {
    const q = s.includes("'") && !s.includes('"') ? '"' : "'";
    let out = q;
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (ch === "\\") out += "\\\\";
      else if (ch === q) out += "\\" + q;
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch === "\t") out += "\\t";
      else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
      else out += ch;
    }
    return out + q;
  }

  /** repr() of a value as Python would print it; kind "float" prints numbers as floats. */
  function repr(v, kind) {
    if (v === null || v === undefined) return "None";
    if (typeof v === "boolean") return v ? "True" : "False";
    if (typeof v === "number") {
      return kind !== "float" && Number.isInteger(v) && !Object.is(v, -0) ? String(v) : floatRepr(v);
    }
    if (typeof v === "string") return strRepr(v);
    if (Array.isArray(v)) return "[" + v.map((x) => repr(x, kind)).join(", ") + "]";
    if (typeof v === "object") {
      return "{" + Object.keys(v).map((k) => strRepr(k) + ": " + repr(v[k], kind)).join(", ") + "}";
    }
    return String(v);
  }

  function pyTypeName(v) {
    if (v === null || v === undefined) return "NoneType";
    if (Array.isArray(v)) return "list";
    if (typeof v === "object") return "dict";
    return typeof v;
  }

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
      throw valueError(`could not convert string to float: ${strRepr(v)}`);
    }
    throw typeError(`float() argument must be a string or a real number, not '${pyTypeName(v)}'`);
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
    if (x <= 0) throw valueError("math domain error");
    return Math.log(x);
  }
  function intRound(f, x) {
    if (Number.isNaN(x)) throw valueError("cannot convert float NaN to integer");
    if (!Number.isFinite(x)) {
      const e = new Error("cannot convert float infinity to integer");
      e.name = "OverflowError";
      throw e;
    }
    return f(x);
  }
  /** Python float ** float (OverflowError instead of inf for finite operands). */
  function floatPow(a, b) {
    const r = Math.pow(a, b);
    if (!Number.isFinite(r) && Number.isFinite(a) && Number.isFinite(b)) {
      const e = new Error("(34, 'Numerical result out of range')");
      e.name = "OverflowError";
      throw e;
    }
    return r;
  }
  function divide(a, b) {
    if (b === 0) {
      const e = new Error("float division by zero");
      e.name = "ZeroDivisionError";
      throw e;
    }
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
  const LAYOUTS = ["interleaved", "half"];

  function checkPositiveInt(name, value) {
    if (typeof value !== "number" || !Number.isInteger(value)) {
      throw valueError(`${name} must be a positive integer, got ${repr(value)}`);
    }
    if (value <= 0) throw valueError(`${name} must be a positive integer, got ${value}`);
    return value;
  }

  function checkEvenDim(name, value) {
    const v = checkPositiveInt(name, value);
    if (v % 2) throw valueError(`${name} must be even (dimensions come in pairs), got ${v}`);
    return v;
  }

  function checkBase(base) {
    const b = toFloat(base);
    if (!Number.isFinite(b) || b <= 1.0) {
      throw valueError(`base must be a finite number > 1, got ${repr(base, "float")}`);
    }
    return b;
  }

  function checkLayout(layout) {
    if (!(typeof layout === "string" && LAYOUTS.includes(layout))) {
      throw valueError(`unknown layout ${repr(layout)}; choose one of: ${LAYOUTS.join(", ")}`);
    }
    return layout;
  }

  function asPositions(positions) {
    if (typeof positions === "number" && Number.isInteger(positions)) {
      const n = checkPositiveInt("positions", positions);
      return Float64Array.from({ length: n }, (_, i) => i);
    }
    const arr = Float64Array.from(flat(positions).map(f64));
    if (arr.length === 0) throw valueError("positions must not be empty");
    if (!arr.every(Number.isFinite)) throw valueError("positions must be finite numbers");
    return arr;
  }

  // ---------------------------------------------------------------------------------------
  // sinusoidal.py
  // ---------------------------------------------------------------------------------------
  const FREQUENCIES = ["paper", "tensor2tensor"];

  function checkFrequencies(frequencies) {
    if (!(typeof frequencies === "string" && FREQUENCIES.includes(frequencies))) {
      throw valueError(
        `unknown frequencies ${repr(frequencies)}; choose one of: ${FREQUENCIES.join(", ")}`
      );
    }
    return frequencies;
  }

  /** ω_i = base^(-2i/d) ("paper") or exp(-i·ln(base)/(d/2-1)) ("tensor2tensor"), (d/2,). */
  function pairFrequencies(dModel, base = 10000.0, frequencies = "paper") {
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
      throw valueError(
        "d_model must be >= 4 for frequencies='tensor2tensor' " +
          `(ω_i = exp(-i·ln(base)/(d/2-1)) divides by d/2-1 = 0), got ${d}`
      );
    }
    const lb = Math.log(b);
    for (let i = 0; i < half; i++) out[i] = Math.exp((-i * lb) / (half - 1));
    return out;
  }

  /** λ_i = 2π/ω_i, (d/2,). */
  function wavelengths(dModel, base = 10000.0, frequencies = "paper") {
    return Array.from(pairFrequencies(dModel, base, frequencies), (w) => (2.0 * Math.PI) / w);
  }

  /** PE(p, pair i) = (sin(p·ω_i), cos(p·ω_i)), (n, d_model), "interleaved" or "half". */
  function sinusoidalPE(positions, dModel, base = 10000.0, layout = "interleaved", frequencies = "paper") {
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
  function offsetProfile(offsets, dModel, base = 10000.0, frequencies = "paper") {
    const omega = pairFrequencies(dModel, base, frequencies); // (d/2,)
    const scalar = !Array.isArray(offsets);
    const k = flat(offsets).map(f64);
    if (!k.every(Number.isFinite)) throw valueError("offsets must be finite numbers");
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
  const ROPE_TYPES = ["default", "linear", "dynamic", "yarn", "longrope", "llama3", "ntk"];
  const REQUIRED_KEYS = {
    default: [],
    linear: ["factor"],
    dynamic: ["factor"],
    ntk: ["factor"],
    yarn: ["factor", "original_max_position_embeddings"],
    longrope: ["short_factor", "long_factor", "original_max_position_embeddings"],
    llama3: ["factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"],
  };
  const SCALING_KEYS = [
    "rope_type",
    "type",
    "rope_theta",
    "partial_rotary_factor",
    "factor",
    "original_max_position_embeddings",
    "attention_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "truncate",
    "short_factor",
    "long_factor",
    "low_freq_factor",
    "high_freq_factor",
  ];
  // keys Python reads as floats (messages print them as floats); the rest are ints
  const FLOAT_KEYS = new Set([
    "rope_theta", "partial_rotary_factor", "factor", "attention_factor", "beta_fast",
    "beta_slow", "mscale", "mscale_all_dim", "low_freq_factor", "high_freq_factor",
  ]);

  const get = (s, key) => (Object.prototype.hasOwnProperty.call(s, key) && !isNone(s[key]) ? s[key] : null);

  function missing(key, ropeType) {
    return valueError(
      `scaling[${strRepr(key)}] is required for rope_type ${strRepr(ropeType)}; ` +
        `required keys: ${REQUIRED_KEYS[ropeType].join(", ")}`
    );
  }

  function positive(name, value, kind) {
    let v;
    try {
      v = toFloat(value);
    } catch (e) {
      throw valueError(`${name} must be a finite number > 0, got ${repr(value, kind)}`);
    }
    if (!Number.isFinite(v) || v <= 0.0) {
      throw valueError(`${name} must be a finite number > 0, got ${repr(value, kind)}`);
    }
    return v;
  }

  function factorOf(scaling, ropeType) {
    if (get(scaling, "factor") === null) throw missing("factor", ropeType);
    return positive("scaling['factor']", scaling.factor, "float");
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
      throw valueError(`dim must be an even number > 2 for rope_type ${strRepr(ropeType)}, got ${dim}`);
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
        throw valueError(
          "scaling['factor'] is None for rope_type 'yarn': pass max_position_embeddings " +
            "(factor = max_position_embeddings / original_max_position_embeddings) or a factor"
        );
      }
      factor = checkPositiveInt("max_position_embeddings", maxPositionEmbeddings) / length;
    } else {
      factor = positive("scaling['factor']", scaling.factor, "float");
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
    const betaFast = toFloat(truthy(scaling.beta_fast) ? scaling.beta_fast : 32); // HF: `or 32`
    const betaSlow = toFloat(truthy(scaling.beta_slow) ? scaling.beta_slow : 1); // HF: `or 1`
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
      throw valueError(`scaling[${strRepr(key)}] must have dim/2 = ${half} entries, got ${arr.length}`);
    }
    if (!arr.every((x) => Number.isFinite(x) && x > 0.0)) {
      throw valueError(`scaling[${strRepr(key)}] must hold finite numbers > 0`);
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
        factor = positive("scaling['factor']", scaling.factor, "float");
      } else if (!isNone(maxPositionEmbeddings)) {
        factor = checkPositiveInt("max_position_embeddings", maxPositionEmbeddings) / length;
      } else {
        throw valueError(
          "rope_type 'longrope' needs scaling['factor'], scaling['attention_factor'] or " +
            "max_position_embeddings to set the attention factor"
        );
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
    const lowFreqFactor = positive("scaling['low_freq_factor']", scaling.low_freq_factor, "float");
    const highFreqFactor = positive("scaling['high_freq_factor']", scaling.high_freq_factor, "float");
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
          throw valueError(
            "scaling['high_freq_factor'] == scaling['low_freq_factor'] and a wavelength lies " +
              "exactly at original_max_position_embeddings / low_freq_factor: transformers " +
              "computes 0/0 there"
          );
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
  function ropeInvFreqArrays(dim, base = 10000.0, scaling = null, seqLen = null, maxPositionEmbeddings = null) {
    dim = checkEvenDim("dim", dim);
    scaling = isNone(scaling) ? {} : scaling;
    if (!isDict(scaling)) {
      throw valueError(`scaling must be a dict (HF rope_parameters) or None, got ${repr(scaling)}`);
    }
    const unknown = Object.keys(scaling).filter((k) => !SCALING_KEYS.includes(k)).sort();
    if (unknown.length) {
      throw valueError(
        `unknown scaling key(s) ${unknown.map(strRepr).join(", ")}; choose from: ` + SCALING_KEYS.join(", ")
      );
    }
    const rt = scaling.rope_type, legacy = scaling.type;
    const ropeType = truthy(rt) ? rt : truthy(legacy) ? legacy : "default";
    if (!(typeof ropeType === "string" && ROPE_TYPES.includes(ropeType))) {
      throw valueError(`unknown rope_type ${repr(ropeType)}; choose one of: ${ROPE_TYPES.join(", ")}`);
    }
    const partial = get(scaling, "partial_rotary_factor");
    if (partial !== null && positive("scaling['partial_rotary_factor']", partial, "float") !== 1.0) {
      throw valueError(
        `partial_rotary_factor must be 1 or absent (got ${repr(partial, "float")}): pass the rotary dim ` +
          "int(head_dim * partial_rotary_factor) as dim instead"
      );
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
        throw valueError("max_position_embeddings is required for rope_type 'dynamic' with seq_len");
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

  function ropeInvFreq(dim, base = 10000.0, scaling = null, seqLen = null, maxPositionEmbeddings = null) {
    const [invFreq, attentionFactor] = ropeInvFreqArrays(dim, base, scaling, seqLen, maxPositionEmbeddings);
    return { invFreq: Array.from(invFreq), attentionFactor };
  }

  // ---------------------------------------------------------------------------------------
  // rope_partial.py: partial rotary and Gemma 4's proportional RoPE
  // ---------------------------------------------------------------------------------------
  const HEAD_ROPE_TYPES = [...ROPE_TYPES, "proportional"];
  const trimZeros = (s) => (s.includes(".") ? s.replace(/\.?0+$/, "") : s);
  /** Python's format(x, "g"). */
  function fmtG(x) {
    if (!Number.isFinite(x)) return floatRepr(x);
    const [m, e] = x.toExponential(5).split("e");
    const ex = parseInt(e, 10);
    if (ex < -4 || ex >= 6) return trimZeros(m) + "e" + (ex < 0 ? "-" : "+") + String(Math.abs(ex)).padStart(2, "0");
    return trimZeros(x.toFixed(Math.max(0, 5 - ex)));
  }
  function fraction(name, value) {
    let v = NaN;
    try { v = toFloat(value); } catch (e) { /* same message below */ }
    if (!(v > 0 && v <= 1)) throw valueError(`${name} must be a number in (0, 1], got ${repr(value, "float")}`);
    return v;
  }
  /** Rotated slots d = int(head_dim * p), even and >= 2. */
  function rotaryDim(headDim, partialRotaryFactor = 1.0) {
    headDim = checkPositiveInt("head_dim", headDim);
    const p = fraction("partial_rotary_factor", partialRotaryFactor);
    const d = Math.trunc(headDim * p);
    if (d < 2 || d % 2) {
      throw valueError(`rotary dim int(head_dim * partial_rotary_factor) = int(${headDim} * ${fmtG(p)}) = ${d}; it must be an even number >= 2`);
    }
    return d;
  }
  /** Turning pairs of proportional RoPE: r = int(p * head_dim // 2). */
  function proportionalPairs(headDim, partialRotaryFactor) {
    headDim = checkPositiveInt("head_dim", headDim);
    const p = fraction("partial_rotary_factor", partialRotaryFactor);
    const r = Math.floor((p * headDim) / 2);
    if (r < 1) throw valueError(`proportional RoPE with head_dim ${headDim} and partial_rotary_factor ${fmtG(p)} turns no pair`);
    return r;
  }
  /** theta_k = base^(-2k/head_dim) / factor for k < r, 0 beyond; (head_dim/2,). */
  function proportionalInvFreq(headDim, base, partialRotaryFactor = 1.0, factor = 1.0) {
    const r = proportionalPairs(headDim, partialRotaryFactor);
    if (headDim % 2) throw valueError(`head_dim must be even for proportional RoPE, got ${headDim}`);
    const out = new Float64Array(headDim / 2);
    out.set(ropeInvFreqArrays(headDim, base, { rope_type: "linear", factor })[0].subarray(0, r));
    return out;
  }
  /** What a transformers rotary module holds for one head: [inv_freq, attention factor]. */
  function headInvFreqArrays(headDim, parameters, maxPositionEmbeddings = null, seqLen = null, partialInDefault = true) {
    headDim = checkPositiveInt("head_dim", headDim);
    const params = { ...parameters };
    const ropeType = truthy(params.rope_type) ? params.rope_type : truthy(params.type) ? params.type : "default";
    if (!(typeof ropeType === "string" && HEAD_ROPE_TYPES.includes(ropeType))) {
      throw valueError(`unknown rope_type ${repr(ropeType)}; choose one of: ${HEAD_ROPE_TYPES.join(", ")}`);
    }
    let partial = params.partial_rotary_factor;
    delete params.partial_rotary_factor;
    partial = isNone(partial) ? 1.0 : fraction("partial_rotary_factor", partial);
    if (isNone(params.rope_theta)) throw valueError("parameters['rope_theta'] is required");
    if (ropeType === "proportional") {
      const unknown = Object.keys(params).filter((k) => !["rope_type", "type", "rope_theta", "factor"].includes(k)).sort();
      if (unknown.length) throw valueError(`unknown key(s) ${unknown.map(strRepr).join(", ")} for rope_type 'proportional'`);
      return [proportionalInvFreq(headDim, toFloat(params.rope_theta), partial, isNone(params.factor) ? 1.0 : params.factor), 1.0];
    }
    if (ropeType === "default" && !partialInDefault) partial = 1.0;
    return ropeInvFreqArrays(rotaryDim(headDim, partial), 10000.0, params, seqLen, maxPositionEmbeddings);
  }
  function headInvFreq(...args) {
    const [invFreq, attentionFactor] = headInvFreqArrays(...args);
    return { invFreq: Array.from(invFreq), attentionFactor };
  }

  // ---------------------------------------------------------------------------------------
  // alibi.py
  // ---------------------------------------------------------------------------------------
  /** m_h = 2^(-B·h/n) for n a power of two; otherwise MPT's / BLOOM's interleaving rule. */
  function alibiSlopes(nHeads, maxBias = 8.0) {
    const n = checkPositiveInt("n_heads", nHeads);
    const mb = typeof maxBias === "boolean" ? Number(maxBias) : maxBias;
    if (typeof mb !== "number") {
      throw typeError(`must be real number, not ${pyTypeName(maxBias) === "string" ? "str" : pyTypeName(maxBias)}`);
    }
    if (!(Number.isFinite(mb) && mb > 0)) {
      throw valueError(`max_bias must be a positive finite number, got ${repr(maxBias, "float")}`);
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
  const LOG_BAND = 2 ** -44; // Math.log (fdlibm in V8, < 1 ulp) is far inside this band

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
    if (!(x > 0) || !Number.isFinite(x)) throw valueError("log_float32 takes finite positive numbers");
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
        throw valueError(`${name} must be whole numbers`);
      }
    }
    return [r, scalar];
  }

  /** T5's _relative_position_bucket; relative_position = key - query. */
  function t5RelativeBucket(relativePositions, bidirectional = true, numBuckets = 32, maxDistance = 128) {
    const [r, scalar] = asIntPositions("relative_position", relativePositions);
    let nb = checkPositiveInt("num_buckets", numBuckets);
    const md = checkPositiveInt("max_distance", maxDistance);
    const bidir = truthy(bidirectional);
    if (bidir) nb = Math.floor(nb / 2);
    const maxExact = Math.floor(nb / 2);
    if (maxExact < 1) throw valueError(`num_buckets must be >= ${bidir ? 4 : 2}, got ${numBuckets}`);
    if (md <= maxExact) {
      throw valueError(`max_distance must be > the ${maxExact} exact buckets, got ${maxDistance}`);
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
    if (mid < 1) throw valueError(`bucket_size must be >= 2, got ${bucketSize}`);
    if (mp - 1 <= mid) {
      throw valueError(`max_position must be > bucket_size/2 + 1 = ${mid + 1}, got ${maxPosition}`);
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

  root.posecards = Object.freeze({
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
    t5RelativeBucket,
    debertaLogBucket,
    ROPE_TYPES: Object.freeze(ROPE_TYPES.slice()),
    SCALING_KEYS: Object.freeze(SCALING_KEYS.slice()),
    HEAD_ROPE_TYPES: Object.freeze(HEAD_ROPE_TYPES.slice()),
    // internals the page and the tests use
    _internal: Object.freeze({
      pairFrequencies, ropeInvFreqArrays, logf32, logf32Exact, floatRepr, repr, FLOAT_KEYS,
    }),
  });
})(typeof window !== "undefined" ? window : globalThis);
