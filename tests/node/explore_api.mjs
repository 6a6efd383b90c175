// The explorer's math (posecards/explore_js/math.js) under Node, for tests/test_explore_math.py:
//   node explore_api.mjs MATH_JS PAYLOAD_JSON
// builds the page's window.posecards from the payload Python writes, then answers each line of
// stdin (a JSON batch of calls) with one line, as tests/node/explore_calls.js does in Chromium.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [mathFile, payloadFile] = process.argv.slice(2);
const make = new Function(`${readFileSync(mathFile, "utf8")}\nreturn posecardsMath;`)();
const API = make(JSON.parse(readFileSync(payloadFile, "utf8")));
const calls = new Function(`return (${readFileSync(new URL("explore_calls.js", import.meta.url), "utf8")});`)();

createInterface({ input: process.stdin }).on("line", (line) => {
  process.stdout.write(calls(API, line) + "\n");
});
