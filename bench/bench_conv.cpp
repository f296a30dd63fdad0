// The convolutions that dominate ResNet18 and YOLOv5s, through ConvolutionLayer
// (lab course6's ComputeGroups and im2col unfolding on the core's GEMM).
// Reports GFLOP/s, counting a multiply-add as 2 FLOPs.
//
//   build/solutions/bin/bench_conv --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
// Threads: OMP_NUM_THREADS (OpenBLAS always runs single-threaded inside the engine).
#include <benchmark/benchmark.h>

#include <random>

#include "kuiper/layers/convolution.hpp"

namespace kuiper {
namespace {

void Convolution(benchmark::State& state, uint32_t in_c, uint32_t out_c, uint32_t kernel,
                 uint32_t stride, uint32_t size) {
  const uint32_t batch = static_cast<uint32_t>(state.range(0));
  ConvParams p;
  p.in_channels = in_c, p.out_channels = out_c;
  p.kernel_h = p.kernel_w = kernel;
  p.stride_h = p.stride_w = stride;
  p.padding_h = p.padding_w = (kernel - 1) / 2;  // "same" padding for odd kernels, 2 for 6x6
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> weight(size_t(out_c) * in_c * kernel * kernel), bias(out_c);
  for (float& w : weight) w = value(rng);
  ConvolutionLayer layer("bench", p, weight, bias);
  std::vector<sftensor> inputs, outputs(batch);
  for (uint32_t n = 0; n < batch; ++n) {
    inputs.push_back(TensorCreate(in_c, size, size));
    inputs.back()->Rand();
  }
  for (auto _ : state) {
    layer.Forward(inputs, outputs);
    benchmark::DoNotOptimize(outputs[0]->raw_ptr());
  }
  const uint32_t out = ConvOutputSize(size, kernel, stride, (kernel - 1) / 2, 1);
  const double flops = 2.0 * batch * out_c * out * out * in_c * kernel * kernel;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ResNet18
BENCHMARK_CAPTURE(Convolution, resnet_conv1_3to64_7x7s2_224, 3, 64, 7, 2, 224)
    ->Arg(1)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Convolution, resnet_64to64_3x3_56, 64, 64, 3, 1, 56)
    ->Arg(1)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Convolution, resnet_128to128_3x3_28, 128, 128, 3, 1, 28)
    ->Arg(1)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Convolution, resnet_256to256_3x3_14, 256, 256, 3, 1, 14)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Convolution, resnet_512to512_3x3_7, 512, 512, 3, 1, 7)
    ->Arg(1)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// YOLOv5s at 640x640
BENCHMARK_CAPTURE(Convolution, yolo_stem_3to32_6x6s2_640, 3, 32, 6, 2, 640)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Convolution, yolo_32to64_3x3s2_320, 32, 64, 3, 2, 320)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Convolution, yolo_32to32_3x3_160, 32, 32, 3, 1, 160)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Convolution, yolo_128to128_3x3_40, 128, 128, 3, 1, 40)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(Convolution, yolo_64to64_1x1_160, 64, 64, 1, 1, 160)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace kuiper

BENCHMARK_MAIN();
