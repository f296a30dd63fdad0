// Times one ncnn model in fp32, for tools/bench_vs_torch.py and tools/bench_load.py.
//
//   ncnn_bench MODEL.param MODEL.bin C,H,W THREADS WARMUP RUNS [--batch N]
//              [--input IN.f32 --output OUT.f32] [--winograd 23]
//
// Prints one line, "per image: median X ms, p90 Y ms", in the form `kuiper bench` prints.
// ncnn has no batch axis: with --batch N a timed run is N extractions, one image each, and
// its time is divided by N. The input is a fixed pseudo-random image in [0, 1) (the
// generator tools/ort_bench.js uses); --input reads C*H*W raw float32 values instead, and
// --output writes the first output blob as raw float32 (its shape goes to stderr), so
// tools/ncnn_models.py can compare it with PyTorch before anything is timed.
// fp16 and bf16 are off (storage, packing and arithmetic), so every layer computes in fp32
// as the engine does; packed fp32 layouts, Winograd and sgemm stay on, as ncnn ships them.
// --winograd 23 keeps ncnn's 3x3 stride-1 layers to Winograd's F(2x2, 3x3), the engine's
// default, instead of letting it pick F(4x4, 3x3) or F(6x6, 3x3) by shape: ncnn with the
// rounding the engine keeps (docs/performance.md#ncnn-winograd).
// Built outside the project by tools/ncnn_bench.sh against an ncnn install prefix: ncnn is
// never a build dependency of the engine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "net.h"

namespace {

double Quantile(const std::vector<double>& sorted, double q) {  // Python's 'inclusive'
  const double position = (sorted.size() - 1) * q;
  const size_t low = static_cast<size_t>(position);
  const size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

bool ReadFloats(const char* path, std::vector<float>& data) {
  FILE* file = std::fopen(path, "rb");
  if (!file) return false;
  const size_t got = std::fread(data.data(), sizeof(float), data.size(), file);
  std::fclose(file);
  return got == data.size();
}

int Usage() {
  std::fprintf(stderr,
               "usage: ncnn_bench MODEL.param MODEL.bin C,H,W THREADS WARMUP RUNS [--batch N]\n"
               "                  [--input IN.f32 --output OUT.f32] [--winograd 23]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) return Usage();
  int c = 0, h = 0, w = 0;
  if (std::sscanf(argv[3], "%d,%d,%d", &c, &h, &w) != 3) return Usage();
  const int threads = std::atoi(argv[4]);
  const int warmup = std::atoi(argv[5]);
  const int runs = std::atoi(argv[6]);
  int batch = 1;
  const char* input_path = nullptr;
  const char* output_path = nullptr;
  bool only_f23 = false;
  for (int i = 7; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--batch"))
      batch = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--input"))
      input_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--output"))
      output_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--winograd") && !std::strcmp(argv[i + 1], "23"))
      only_f23 = true;
    else
      return Usage();
  }
  if (runs < 1 || batch < 1) return Usage();

  ncnn::Net net;
  net.opt.num_threads = threads;
  net.opt.use_fp16_storage = false;
  net.opt.use_fp16_packed = false;
  net.opt.use_fp16_arithmetic = false;
  net.opt.use_bf16_storage = false;
  net.opt.use_vulkan_compute = false;
  if (only_f23) {
    net.opt.use_winograd43_convolution = false;
    net.opt.use_winograd63_convolution = false;
  }
  if (net.load_param(argv[1]) != 0 || net.load_model(argv[2]) != 0) {
    std::fprintf(stderr, "ncnn_bench: cannot load %s / %s\n", argv[1], argv[2]);
    return 1;
  }
  const char* in_name = net.input_names()[0];
  const char* out_name = net.output_names()[0];

  std::vector<float> data(static_cast<size_t>(c) * h * w);
  if (input_path) {
    if (!ReadFloats(input_path, data)) {
      std::fprintf(stderr, "ncnn_bench: %s does not hold %zu floats\n", input_path, data.size());
      return 1;
    }
  } else {
    unsigned long long seed = 12345;
    for (float& value : data) {
      seed = (seed * 1103515245 + 12345) % 2147483648ULL;
      value = static_cast<float>(seed / 2147483648.0);
    }
  }
  // Channel by channel: an ncnn Mat pads each channel to 16 bytes, the file does not.
  ncnn::Mat input(w, h, c);
  for (int q = 0; q < c; ++q) {
    std::memcpy(input.channel(q), data.data() + static_cast<size_t>(q) * h * w,
                sizeof(float) * h * w);
  }

  auto forward = [&](ncnn::Mat& out) {
    ncnn::Extractor ex = net.create_extractor();
    ex.input(in_name, input);
    return ex.extract(out_name, out);
  };

  ncnn::Mat out;
  if (forward(out) != 0) {
    std::fprintf(stderr, "ncnn_bench: extracting %s failed\n", out_name);
    return 1;
  }
  if (output_path) {
    const ncnn::Mat flat = out.reshape(out.w * out.h * out.d * out.c);
    FILE* file = std::fopen(output_path, "wb");
    if (!file ||
        std::fwrite(flat.data, sizeof(float), flat.w, file) != static_cast<size_t>(flat.w)) {
      std::fprintf(stderr, "ncnn_bench: cannot write %s\n", output_path);
      return 1;
    }
    std::fclose(file);
    std::fprintf(stderr, "output %s: dims %d, c %d, d %d, h %d, w %d\n", out_name, out.dims, out.c,
                 out.d, out.h, out.w);
  }

  for (int i = 0; i < warmup; ++i) forward(out);
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    for (int b = 0; b < batch; ++b) forward(out);
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    times.push_back(took.count() / batch);
  }
  std::sort(times.begin(), times.end());
  std::printf("per image: median %.3f ms, p90 %.3f ms\n", Quantile(times, 0.5),
              Quantile(times, 0.9));
  return 0;
}
