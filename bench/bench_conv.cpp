// Every convolution shape of ResNet18 (224x224) and YOLOv5s (640x640), through
// ConvolutionLayer (lab course6's ComputeGroups, and its im2col unfolding on the
// core's GEMM or the core's Winograd route), with bias as in the models.
// Reports per shape:
//   GFLOP/s  counting a multiply-add as 2 FLOPs (out_c * out_h * out_w *
//            in_c/groups * kh * kw multiply-adds per image);
//   peak     that as a fraction of the machine's peak for the threads used;
//   layers   how many convolutions of the model have this shape (times the
//            time per convolution, that is the shape's share of the model).
//
// The peak is measured, not read from a data sheet: before the benchmarks, one
// thread runs a loop of independent fused multiply-adds on registers only (12
// accumulators, enough to keep both FMA pipes of a core busy; AVX-512 where
// the CPU has it, else AVX2), the best of 5 runs of ~50 ms of its CPU time,
// times the number of threads. A VM's nominal clock does not tell it,
// and CPUs differ in FMA pipes per core and in how wide an FMA they run in
// one step (the peaks measured so far: docs/performance.md#peak). It is
// printed as `peak_gflops` in the header of the report. The convolutions are
// timed by the wall clock: on a busy machine their fraction of the peak comes
// out low.
//
//   build/solutions/bin/bench_conv --benchmark_repetitions=3 \
//       --benchmark_report_aggregates_only=true
//   build/solutions/bin/bench_conv --threads=1 --benchmark_filter=resnet18
// Threads: --threads=N, 0 or absent for every core (OpenBLAS always runs
// single-threaded inside the engine).
// Copies: --copies=N builds each layer N times with weights of its own and
// runs them in turn. One layer run again and again finds its weights (and
// Winograd's transformed kernels, 16.8 MB at 512 x 512) in L3; in a whole model
// they come from memory, as with --copies=12. Figures without it flatter
// the layers whose weights are large (docs/performance.md#winograd-prefetch).
// Routes: by default the 3x3 stride-1 shapes with 16 to 256 channels take the
// Winograd route and the shapes with at most 256 output positions the direct
// route (course6_conv/README.md §8; each layer is made for its shape's output
// size); --conv_route=im2col times them through the im2col route instead (the
// lab's unfolding and the core's GEMM: RuntimeOptions with both routes off);
// --conv_route=winograd_f4 takes F(4x4, 3x3) on the Winograd layers
// (RuntimeOptions::winograd_f4), --conv_route=winograd_f2 F(2x2, 3x3).
// The shapes: `nn.Conv2d` lines of build/models/{resnet18,yolov5s}/*.pnnx.param
// (and YOLOv5s's Detect head, whose three 1x1 convolutions the Detect layer
// computes with the same MultiplyInto), grouped by geometry.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kuiper/layers/convolution.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {
namespace {

struct ConvShape {
  const char* model;
  uint32_t in_c, out_c, kernel, stride, size;  // square kernel and input
  int layers;                                  // convolutions of this shape in the model
};

// Padding is "same" for odd kernels, 2 for YOLOv5s's 6x6 stem: (kernel - 1) / 2.
constexpr ConvShape kShapes[] = {
    {"resnet18", 3, 64, 7, 2, 224, 1},   {"resnet18", 64, 64, 3, 1, 56, 4},
    {"resnet18", 64, 128, 3, 2, 56, 1},  {"resnet18", 64, 128, 1, 2, 56, 1},
    {"resnet18", 128, 128, 3, 1, 28, 3}, {"resnet18", 128, 256, 3, 2, 28, 1},
    {"resnet18", 128, 256, 1, 2, 28, 1}, {"resnet18", 256, 256, 3, 1, 14, 3},
    {"resnet18", 256, 512, 3, 2, 14, 1}, {"resnet18", 256, 512, 1, 2, 14, 1},
    {"resnet18", 512, 512, 3, 1, 7, 3},  {"yolov5s", 3, 32, 6, 2, 640, 1},
    {"yolov5s", 32, 64, 3, 2, 320, 1},   {"yolov5s", 32, 32, 1, 1, 160, 1},
    {"yolov5s", 32, 32, 3, 1, 160, 1},   {"yolov5s", 64, 32, 1, 1, 160, 2},
    {"yolov5s", 64, 64, 1, 1, 160, 1},   {"yolov5s", 64, 128, 3, 2, 160, 1},
    {"yolov5s", 64, 64, 1, 1, 80, 3},    {"yolov5s", 64, 64, 3, 1, 80, 3},
    {"yolov5s", 128, 64, 1, 1, 80, 2},   {"yolov5s", 128, 128, 1, 1, 80, 2},
    {"yolov5s", 128, 255, 1, 1, 80, 1},  // Detect
    {"yolov5s", 128, 256, 3, 2, 80, 1},  {"yolov5s", 128, 128, 3, 2, 80, 1},
    {"yolov5s", 256, 64, 1, 1, 80, 2},   {"yolov5s", 128, 128, 1, 1, 40, 5},
    {"yolov5s", 128, 128, 3, 1, 40, 5},  {"yolov5s", 256, 128, 1, 1, 40, 5},
    {"yolov5s", 256, 255, 1, 1, 40, 1},  // Detect
    {"yolov5s", 256, 256, 1, 1, 40, 3},  {"yolov5s", 256, 512, 3, 2, 40, 1},
    {"yolov5s", 256, 256, 3, 2, 40, 1},  {"yolov5s", 512, 128, 1, 1, 40, 2},
    {"yolov5s", 256, 256, 1, 1, 20, 2},  {"yolov5s", 256, 256, 3, 1, 20, 2},
    {"yolov5s", 512, 255, 1, 1, 20, 1},  // Detect
    {"yolov5s", 512, 256, 1, 1, 20, 6},  {"yolov5s", 512, 512, 1, 1, 20, 2},
    {"yolov5s", 1024, 512, 1, 1, 20, 1},
};

// ---- the peak: fused multiply-adds on registers, per thread ----

constexpr int kAccumulators = 12;  // FMA latency x pipes, with room to spare

// `iterations` rounds of kAccumulators independent FMAs on 16 floats; returns
// a value depending on all of them so the loop cannot be dropped.
__attribute__((target("avx512f"))) float FmaLoopAvx512(int64_t iterations) {
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.0001f);
  for (int64_t n = 0; n < iterations; ++n) {
#pragma GCC unroll 16  // every accumulator in a register, not on the stack
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  for (int i = 1; i < kAccumulators; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
  return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2,fma"))) float FmaLoopAvx2(int64_t iterations) {
  __m256 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_set1_ps(0.001f * i);
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.0001f);
  for (int64_t n = 0; n < iterations; ++n) {
#pragma GCC unroll 16  // every accumulator in a register, not on the stack
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  for (int i = 1; i < kAccumulators; ++i) acc[0] = _mm256_add_ps(acc[0], acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, acc[0]);
  return lanes[0] + lanes[7];
}

// GFLOP/s of one core: the best of 5 runs, each timed by the thread's own CPU
// time (clock_gettime), not the wall clock. Measured on one thread and
// multiplied by the thread count: on a shared machine the other core is often
// busy and this thread is preempted now and then, while the peak is what a
// core does while it runs the thread, not what was left of the machine.
double ThreadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

double MeasureCorePeakGflops() {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const int lanes = avx512 ? 16 : 8;
  const int64_t iterations = 4'000'000;  // ~50 ms at 3.5 GHz
  double best = 0;
  volatile float sink = 0;
  for (int repeat = 0; repeat < 5; ++repeat) {
    const double start = ThreadSeconds();
    sink = sink + (avx512 ? FmaLoopAvx512(iterations) : FmaLoopAvx2(iterations));
    const double seconds = ThreadSeconds() - start;
    best = std::max(best, 2.0 * lanes * kAccumulators * iterations / seconds * 1e-9);
  }
  return best;
}

double peak_gflops = 0;  // set by main before the benchmarks run
RuntimeOptions routes;   // set by main from --conv_route
int copies = 1;          // set by main from --copies

// ---- one convolution shape through the layer ----

void Convolution(benchmark::State& state, const ConvShape& shape) {
  const uint32_t batch = static_cast<uint32_t>(state.range(0));
  ConvParams p;
  p.in_channels = shape.in_c, p.out_channels = shape.out_c;
  p.kernel_h = p.kernel_w = shape.kernel;
  p.stride_h = p.stride_w = shape.stride;
  p.padding_h = p.padding_w = (shape.kernel - 1) / 2;
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> weight(size_t{shape.out_c} * shape.in_c * shape.kernel * shape.kernel),
      bias(shape.out_c);
  for (float& w : weight) w = value(rng);
  for (float& b : bias) b = value(rng);
  const uint32_t out = ConvOutputSize(shape.size, shape.kernel, shape.stride, p.padding_h, 1);
  std::vector<std::unique_ptr<ConvolutionLayer>> layers;  // --copies of it, each its own weights
  for (int i = 0; i < copies; ++i) {
    if (i > 0) std::generate(weight.begin(), weight.end(), [&] { return value(rng); });
    layers.push_back(
        std::make_unique<ConvolutionLayer>("bench", p, weight, bias, uint64_t{out} * out, routes));
  }
  size_t next = 0;
  std::vector<sftensor> inputs, outputs(batch);
  for (uint32_t n = 0; n < batch; ++n) {
    inputs.push_back(TensorCreate(shape.in_c, shape.size, shape.size));
    inputs.back()->Rand();
  }
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    layers[next++ % layers.size()]->Forward(inputs, outputs);
    benchmark::DoNotOptimize(outputs[0]->raw_ptr());
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const double flops =
      2.0 * batch * shape.out_c * out * out * shape.in_c * shape.kernel * shape.kernel;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  // Timed here too: a rate counter would print "/s" after a plain fraction.
  state.counters["peak"] =
      seconds > 0 ? flops * state.iterations() * 1e-9 / seconds / peak_gflops : 0;
  state.counters["layers"] = shape.layers;
}

}  // namespace
}  // namespace kuiper

int main(int argc, char** argv) {
  using kuiper::ConvShape;
  // --threads=N, --copies=N and --conv_route=... are ours: taken out before the
  // benchmark library reads the rest.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--threads=")) {
      kuiper::SetMaxThreads(std::atoi(argv[i] + 10));
    } else if (arg.starts_with("--copies=")) {
      kuiper::copies = std::max(1, std::atoi(argv[i] + 9));
    } else if (arg == "--conv_route=im2col") {
      kuiper::routes.winograd_conv = kuiper::routes.direct_conv = false;
    } else if (arg == "--conv_route=winograd_f4") {
      kuiper::routes.winograd_f4 = true;
    } else if (arg == "--conv_route=winograd_f2") {
      kuiper::routes.winograd_f4 = false;
    } else if (arg != "--conv_route=default") {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  const double core_peak = kuiper::MeasureCorePeakGflops();
  kuiper::peak_gflops = core_peak * kuiper::MaxThreads();
  benchmark::AddCustomContext(
      "peak_gflops",
      fmt::format("{:.1f} = {} thread(s) x {:.1f} per core (register-only {} FMA loop, "
                  "best of 5 on one thread, CPU time)",
                  kuiper::peak_gflops, kuiper::MaxThreads(), core_peak,
                  __builtin_cpu_supports("avx512f") ? "AVX-512" : "AVX2"));
  for (const ConvShape& shape : kuiper::kShapes) {
    const std::string name =
        fmt::format("{}/{}to{}_{}x{}s{}_{}", shape.model, shape.in_c, shape.out_c, shape.kernel,
                    shape.kernel, shape.stride, shape.size);
    auto* bench = benchmark::RegisterBenchmark(name.c_str(), kuiper::Convolution, shape);
    bench->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
    // Batch 4 where it fits in a few MB per image: ResNet18's shapes.
    if (std::string(shape.model) == "resnet18") bench->Arg(4);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
