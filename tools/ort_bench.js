// Times one ONNX model in ONNX Runtime (npm onnxruntime-node), for tools/bench_vs_torch.py.
//
//   node tools/ort_bench.js MODEL.onnx N,C,H,W THREADS WARMUP RUNS [--profile]
//
// Prints one line, "per image: median X ms, p90 Y ms", in the form `kuiper bench` prints,
// for the input shape given (batch included). The runtime is the CPU execution provider
// with every graph optimisation on and THREADS intra-op threads, one inter-op thread.
// --profile adds ONNX Runtime's own time per node of the optimised graph over the timed
// runs, slowest first, to set beside `kuiper bench MODEL --profile` (run it from build/ort,
// where tools/bench_vs_torch.py installed the package and exported the models); the
// "per image" line is then timed with profiling on too.
// onnxruntime-node is looked up from the working directory (bench_vs_torch.py runs this
// from build/ort, where it installs the package with `npm install --ignore-scripts`).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require(require.resolve('onnxruntime-node', {paths: [process.cwd()]}));

function quantile(sorted, q) {  // linear interpolation, like Python's 'inclusive' method
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.min(low + 1, sorted.length - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

async function main() {
  const args = process.argv.slice(2);
  const profile = args.includes('--profile');
  const [model, shapeText, threads, warmup, runs] = args.filter((a) => a !== '--profile');
  if (!runs) {
    console.error(
        'usage: node tools/ort_bench.js MODEL.onnx N,C,H,W THREADS WARMUP RUNS [--profile]');
    process.exit(2);
  }
  const shape = shapeText.split(',').map(Number);
  const profileDir = profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'ort_bench_')) : null;
  const session = await ort.InferenceSession.create(path.resolve(model), {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    enableProfiling: profile,
    profileFilePrefix: profile ? path.join(profileDir, 'profile') : undefined,
  });
  const count = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(count);
  let seed = 12345;  // a fixed pseudo-random input in [0, 1)
  for (let i = 0; i < count; ++i) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    data[i] = seed / 2147483648;
  }
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, shape)};
  for (let i = 0; i < Number(warmup); ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(runs); ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6 / shape[0]);
  }
  times.sort((a, b) => a - b);
  console.log(`per image: median ${quantile(times, 0.5).toFixed(3)} ms, ` +
              `p90 ${quantile(times, 0.9).toFixed(3)} ms`);
  if (profile) {
    try {
      session.endProfiling();
      printProfile(profileDir, Number(warmup), shape[0]);
    } finally {
      fs.rmSync(profileDir, {recursive: true, force: true});
    }
  }
}

// The profile file ONNX Runtime wrote into `dir`: one event per node and run
// ("<node>_kernel_time", microseconds). Prints each node's median over the
// runs after the first `warmup` (the untimed ones), slowest first.
function printProfile(dir, warmup, batch) {
  const file = fs.readdirSync(dir).find((name) => name.endsWith('.json'));
  if (!file) throw new Error(`ONNX Runtime wrote no profile into ${dir}`);
  const nodes = new Map();  // node name -> {type, shape, times}
  for (const event of JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))) {
    if (event.cat !== 'Node' || !event.name.endsWith('_kernel_time')) continue;
    const name = event.name.slice(0, -'_kernel_time'.length);
    if (!nodes.has(name)) {
      const output = (event.args.output_type_shape || [])[0] || {};
      nodes.set(name, {type: event.args.op_name, shape: Object.values(output)[0] || [], times: []});
    }
    nodes.get(name).times.push(event.dur / 1000);
  }
  const rows = [...nodes].map(([name, node]) => {
    const timed = node.times.slice(warmup).sort((a, b) => a - b);
    return {name, type: node.type, shape: node.shape, ms: quantile(timed, 0.5)};
  }).sort((a, b) => b.ms - a.ms);
  const total = rows.reduce((sum, row) => sum + row.ms, 0);
  console.log(`\nper node of the optimised graph, median ms per run of batch ${batch} ` +
              `(${rows.length} nodes, ${total.toFixed(3)} ms in nodes, profiling on):`);
  console.log(`${'type'.padEnd(20)} ${'name'.padEnd(50)} ${'output shape'.padEnd(22)} ` +
              `${'time ms'.padStart(8)} ${'share %'.padStart(8)}`);
  for (const row of rows) {
    console.log(`${String(row.type).padEnd(20)} ${row.name.slice(0, 50).padEnd(50)} ` +
                `${('(' + row.shape.join(',') + ')').padEnd(22)} ${row.ms.toFixed(3).padStart(8)} ` +
                `${(100 * row.ms / total).toFixed(2).padStart(8)}`);
  }
}

main().catch((error) => {
  console.error(`ort_bench: ${error.message}`);
  process.exit(1);
});
