// Times one ONNX model in ONNX Runtime (npm onnxruntime-node), for tools/bench_vs_torch.py.
//
//   node tools/ort_bench.js MODEL.onnx N,C,H,W THREADS WARMUP RUNS
//
// Prints one line, "per image: median X ms, p90 Y ms", in the form `kuiper bench` prints,
// for the input shape given (batch included). The runtime is the CPU execution provider
// with every graph optimisation on and THREADS intra-op threads, one inter-op thread.
// onnxruntime-node is looked up from the working directory (bench_vs_torch.py runs this
// from build/ort, where it installs the package with `npm install --ignore-scripts`).
'use strict';
const path = require('path');
const ort = require(require.resolve('onnxruntime-node', {paths: [process.cwd()]}));

function quantile(sorted, q) {  // linear interpolation, like Python's 'inclusive' method
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.min(low + 1, sorted.length - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

async function main() {
  const [model, shapeText, threads, warmup, runs] = process.argv.slice(2);
  if (!runs) {
    console.error('usage: node tools/ort_bench.js MODEL.onnx N,C,H,W THREADS WARMUP RUNS');
    process.exit(2);
  }
  const shape = shapeText.split(',').map(Number);
  const session = await ort.InferenceSession.create(path.resolve(model), {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
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
}

main().catch((error) => {
  console.error(`ort_bench: ${error.message}`);
  process.exit(1);
});
