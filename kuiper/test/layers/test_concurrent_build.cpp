// Two graphs built and run at the same time, with different RuntimeOptions,
// give exactly what each gives built and run alone: the routes, the plan and
// the fusions are each graph's own, and no build reads or writes another's
// (run under the asan preset, and tsan where it is built).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "../op_test.hpp"

namespace kuiper {
namespace {

// Conv2d(32, 32, 3, padding=1) + ReLU on 32 x 12 x 12 items: Winograd's shape.
pnnx::Graph ConcurrentConvGraph() {
  std::vector<float> weight(32 * 32 * 9), bias(32);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = float((i * 29) % 31) / 31 - 0.5f;
  for (size_t o = 0; o < bias.size(); ++o) bias[o] = 0.05f * (float(o) - 16);
  RuntimeAttribute w, b;
  w.type = b.type = pnnx::DataType::kF32;
  w.shape = {32, 32, 3, 3};
  b.shape = {32};
  const auto bytes = [](const std::vector<float>& v) {
    const auto* p = reinterpret_cast<const char*>(v.data());
    return std::vector<char>(p, p + v.size() * sizeof(float));
  };
  w.data = bytes(weight);
  b.data = bytes(bias);
  return test::OneOperatorGraph("nn.Conv2d",
                                {{"in_channels", 32},
                                 {"out_channels", 32},
                                 {"kernel_size", std::vector<int>{3, 3}},
                                 {"stride", std::vector<int>{1, 1}},
                                 {"padding", std::vector<int>{1, 1}},
                                 {"dilation", std::vector<int>{1, 1}},
                                 {"groups", 1},
                                 {"bias", true}},
                                {{"weight", w}, {"bias", b}}, {{32, 12, 12}}, {{32, 12, 12}},
                                Activation::kRelu);
}

// The output of a graph built with `options`, run `runs` times on `input`
// (every run must give the first's), and the route its convolution took.
struct ConcurrentRun {
  std::vector<std::vector<float>> output;
  ConvRoute route = ConvRoute::kInPlace;
  bool stable = true;
};

ConcurrentRun BuildAndRun(const RuntimeOptions& options, const std::vector<sftensor>& input,
                          int runs) {
  RuntimeGraph graph(ConcurrentConvGraph(), "concurrent");
  graph.Build(options);
  ConcurrentRun result;
  result.route =
      dynamic_cast<const ConvolutionLayer&>(*graph.FindOperator("op_under_test")->layer).route();
  for (int r = 0; r < runs; ++r) {
    std::vector<std::vector<float>> output;
    for (const sftensor& item : graph.Forward(input)) output.push_back(item->values(true));
    if (r == 0) result.output = output;
    result.stable = result.stable && output == result.output;
  }
  return result;
}

TEST(ConcurrentBuild, TwoGraphsWithDifferentOptionsGiveTheirSerialResults) {
  RuntimeOptions fast;  // the defaults: Winograd, planned, the ReLU fused
  RuntimeOptions plain;
  plain.winograd_conv = plain.direct_conv = false;
  plain.buffer_planning = false;
  plain.fuse_activations = false;
  const std::vector<sftensor> input = test::SeededItems({32, 12, 12}, 7);
  const ConcurrentRun fast_alone = BuildAndRun(fast, input, 1);
  const ConcurrentRun plain_alone = BuildAndRun(plain, input, 1);
  ASSERT_EQ(fast_alone.route, ConvRoute::kWinograd);
  ASSERT_EQ(plain_alone.route, ConvRoute::kIm2Col);
  for (int round = 0; round < 4; ++round) {
    ConcurrentRun fast_run, plain_run;
    std::thread first([&] { fast_run = BuildAndRun(fast, input, 3); });
    std::thread second([&] { plain_run = BuildAndRun(plain, input, 3); });
    first.join();
    second.join();
    EXPECT_EQ(fast_run.route, ConvRoute::kWinograd) << "round " << round;
    EXPECT_EQ(plain_run.route, ConvRoute::kIm2Col) << "round " << round;
    EXPECT_TRUE(fast_run.stable && plain_run.stable) << "round " << round;
    EXPECT_EQ(fast_run.output, fast_alone.output) << "round " << round << ", Winograd";
    EXPECT_EQ(plain_run.output, plain_alone.output) << "round " << round << ", im2col";
  }
}

}  // namespace
}  // namespace kuiper
