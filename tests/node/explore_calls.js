// One batch of calls on the explorer's API, shared by Node (explore_api.mjs) and Chromium
// (tests/test_explore_math.py evaluates this expression in the page): text is JSON of
// [[name, args], ...] (a name may be "_internal.logf32"; "map:NAME" calls NAME on each element
// of its one argument; "functions" lists the API's functions); the answer is JSON of [{ok} | {err, name, arg}, ...]. Numbers JSON
// cannot hold travel as {"$float": "nan" | "inf" | "-inf"} both ways.
(function posecardsCalls(API, text) {
  "use strict";
  const FLOATS = { nan: NaN, inf: Infinity, "-inf": -Infinity };
  const decode = (v) => {
    if (Array.isArray(v)) return v.map(decode);
    if (v !== null && typeof v === "object") {
      if (Object.keys(v).length === 1 && "$float" in v) return FLOATS[v.$float];
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decode(x)]));
    }
    return v;
  };
  const encode = (v) => {
    if (typeof v === "number" && !Number.isFinite(v)) {
      return { $float: Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf" };
    }
    if (ArrayBuffer.isView(v)) return Array.from(v, encode);
    if (Array.isArray(v)) return v.map(encode);
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x)]));
    }
    return v;
  };
  const call = ([name, args]) => {
    const each = name.startsWith("map:");
    let fn = API;
    for (const part of name.replace(/^map:/, "").split(".")) fn = fn[part];
    if (typeof fn !== "function") return { err: `no function ${name}`, name: "LookupError", arg: null };
    try {
      const a = decode(args);
      return { ok: encode(each ? a[0].map((x) => fn(x)) : fn(...a)) };
    } catch (e) {
      return { err: e.message, name: e.name, arg: e.arg === undefined ? null : e.arg };
    }
  };
  // "functions": the names of every function the API offers (its constants left out)
  const list = () => ({ ok: Object.keys(API).filter((k) => typeof API[k] === "function").sort() });
  return JSON.stringify(JSON.parse(text).map((c) => (c[0] === "functions" ? list() : call(c))));
})
