// Lab course6's "make it fast": your Im2ColMatrix::FillBlock against a plain
// reference unfolding, timed alone (no GEMM) on whole im2col matrices filled
// block by block as the core's MultiplyInto asks for them, on one thread.
// The reference is the formula of course6_conv/README.md §3.3 element
// by element (Hint 1's loop), kept here so the student release has it; the
// ratio printed at the end is your time over its time, so below 1 is faster.
// Both are first checked to write the same matrix.
//
//   cmake --build --preset student --target bench_unfold
//   build/student/bin/bench_unfold
//
// Shapes: YOLOv5s's stem (3->32, 6x6, stride 2, padding 2, on 3x640x640: a
// 102400 x 108 matrix, where the unfolding is most of the layer's work) and
// ResNet18's 512->512 3x3 layer at 7x7 (runs of 7 rows: the short end).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "kuiper/layers/convolution.hpp"

namespace kuiper {
namespace {

struct UnfoldShape {
  const char* name;
  uint32_t channels, size, kernel, stride, padding;  // square input and kernel
};

constexpr UnfoldShape kShapes[] = {
    {"yolov5s_stem_3x640x640_k6s2p2", 3, 640, 6, 2, 2},
    {"resnet18_512x7x7_k3s1p1", 512, 7, 3, 1, 1},
};

// The reference: every element from the formula, two divisions per element.
void ReferenceFillBlock(const ftensor& input, const ConvParams& p, uint32_t out_h,
                        uint64_t first_row, uint64_t rows, uint64_t first_col, uint64_t last_col,
                        float* block) {
  const uint32_t kh = p.kernel_h, kw = p.kernel_w;
  const int64_t height = input.rows(), width = input.cols();
  for (uint64_t col = first_col; col < last_col; ++col) {
    const uint32_t c = col / (kh * kw);  // column = (c * kh + i) * kw + j
    const uint32_t i = (col / kw) % kh;
    const uint32_t j = col % kw;
    const arma::fmat& channel = input.slice(c);
    for (uint64_t n = 0; n < rows; ++n) {
      const uint64_t row = first_row + n;
      const int64_t oy = row % out_h, ox = row / out_h;
      const int64_t y = oy * p.stride_h + int64_t{i} * p.dilation_h - p.padding_h;
      const int64_t x = ox * p.stride_w + int64_t{j} * p.dilation_w - p.padding_w;
      const bool inside = y >= 0 && y < height && x >= 0 && x < width;
      block[(col - first_col) * rows + n] = inside ? channel.at(y, x) : 0.f;
    }
  }
}

// One shape's input, geometry and block size.
struct Problem {
  sftensor input;
  ConvParams params;
  uint32_t out_h = 0, out_w = 0;
  uint64_t m = 0, k = 0;    // the im2col matrix: m rows, k columns
  uint64_t block_rows = 0;  // MultiplyInto's choice: ~128K floats, at least 256 rows

  explicit Problem(const UnfoldShape& s) {
    params.in_channels = params.out_channels = s.channels;
    params.kernel_h = params.kernel_w = s.kernel;
    params.stride_h = params.stride_w = s.stride;
    params.padding_h = params.padding_w = s.padding;
    out_h = out_w = ConvOutputSize(s.size, s.kernel, s.stride, s.padding, 1);
    m = uint64_t{out_h} * out_w;
    k = uint64_t{s.channels} * s.kernel * s.kernel;
    block_rows = std::min<uint64_t>(m, std::max<uint64_t>(256, (uint64_t{1} << 17) / k));
    input = TensorCreate(s.channels, s.size, s.size);
    input->Rand();
  }

  // Fills the whole matrix, block after block, into `buffer` (one block long).
  template <typename Fill>
  void FillAll(Fill fill, std::vector<float>& buffer) const {
    for (uint64_t first = 0; first < m; first += block_rows) {
      fill(first, std::min(block_rows, m - first), buffer.data());
    }
  }
};

// The fastest CPU time per whole matrix seen for each benchmark, by name.
std::map<std::string, double> best_ms;

double ThreadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

// An empty string when FillBlock writes what the reference writes, else where it differs.
std::string Mismatch(const Problem& problem, const Im2ColMatrix& matrix) {
  std::vector<float> yours(problem.block_rows * problem.k, -7.f),
      reference(problem.block_rows * problem.k);
  for (uint64_t first = 0; first < problem.m; first += problem.block_rows) {
    const uint64_t rows = std::min(problem.block_rows, problem.m - first);
    matrix.FillBlock(first, rows, 0, problem.k, yours.data());
    ReferenceFillBlock(*problem.input, problem.params, problem.out_h, first, rows, 0, problem.k,
                       reference.data());
    for (uint64_t e = 0; e < rows * problem.k; ++e) {
      if (yours[e] != reference[e]) {
        return fmt::format("row {}, column {}: yours {}, the formula's {}", first + e % rows,
                           e / rows, yours[e], reference[e]);
      }
    }
  }
  return "";
}

void Unfold(benchmark::State& state, const UnfoldShape& shape, bool reference,
            const std::string& name) {
  const Problem problem(shape);
  const Im2ColMatrix matrix =
      Im2Col(*problem.input, 0, shape.channels, problem.params, problem.out_h, problem.out_w);
  std::vector<float> buffer(problem.block_rows * problem.k);
  if (!reference) {
    try {
      if (const std::string where = Mismatch(problem, matrix); !where.empty()) {
        state.SkipWithError(("FillBlock differs from the formula at " + where).c_str());
        return;
      }
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());  // NotImplemented in the skeleton
      return;
    }
  }
  const auto fill = [&](uint64_t first, uint64_t rows, float* block) {
    if (reference) {
      ReferenceFillBlock(*problem.input, problem.params, problem.out_h, first, rows, 0, problem.k,
                         block);
    } else {
      matrix.FillBlock(first, rows, 0, problem.k, block);
    }
  };
  for (auto _ : state) {
    const double start = ThreadSeconds();
    problem.FillAll(fill, buffer);
    benchmark::DoNotOptimize(buffer.data());
    const double ms = (ThreadSeconds() - start) * 1e3;
    auto [it, fresh] = best_ms.try_emplace(name, ms);
    if (!fresh) it->second = std::min(it->second, ms);
  }
  state.counters["MB"] = problem.m * problem.k * 4e-6;
}

}  // namespace
}  // namespace kuiper

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::pair<std::string, std::string>> pairs;  // (yours, reference) names
  for (const kuiper::UnfoldShape& shape : kuiper::kShapes) {
    const std::string yours = fmt::format("{}/yours", shape.name);
    const std::string reference = fmt::format("{}/reference", shape.name);
    for (const auto& [name, is_reference] : {std::pair{yours, false}, std::pair{reference, true}}) {
      benchmark::RegisterBenchmark(name.c_str(), kuiper::Unfold, shape, is_reference, name)
          ->Unit(benchmark::kMillisecond)
          ->MeasureProcessCPUTime();
    }
    pairs.emplace_back(yours, reference);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The ratio of the fastest runs: the least disturbed by other work on the machine.
  std::printf("\nyour FillBlock / the reference (fastest whole matrix, one thread, CPU time):\n");
  for (const auto& [yours, reference] : pairs) {
    const auto y = kuiper::best_ms.find(yours), r = kuiper::best_ms.find(reference);
    if (y == kuiper::best_ms.end() || r == kuiper::best_ms.end()) {
      std::printf("  %-40s not measured (see the error above)\n",
                  yours.substr(0, yours.find('/')).c_str());
      continue;
    }
    std::printf("  %-40s %8.3f ms / %8.3f ms = %.2f\n", yours.substr(0, yours.find('/')).c_str(),
                y->second, r->second, y->second / r->second);
  }
  return 0;
}
