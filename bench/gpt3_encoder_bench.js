// The reference byte-level BPE's encode throughput: the npm package gpt-3-encoder (GPT-2's
// encoder in JavaScript) on a text file. Run by tokenizer_bench.py with NODE_PATH set to where
// it installed the package.
const fs = require('fs');
const { encode } = require('gpt-3-encoder');
const text = fs.readFileSync(process.argv[2], 'utf8');
const bytes = Buffer.byteLength(text, 'utf8');
let tokens = encode(text).length;  // warms the package's word cache, as graphrt's warm-up call
let best = Infinity;
for (let i = 0; i < 1; i++) {  // one timed call: the package takes about a minute per MB
  const t0 = process.hrtime.bigint();
  tokens = encode(text).length;
  best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
}
console.log(`${'gpt-3-encoder (npm, node ' + process.version + ')'.padEnd(30)} ${(bytes / best / 1e6).toFixed(2).padStart(8)} MB/s  (${tokens} tokens, ${best.toFixed(3)} s)`);
