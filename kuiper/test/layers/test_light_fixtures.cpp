// Whole tiny models exported from PyTorch (models/tiny.py, committed in
// models/fixtures/) run through RuntimeGraph and compared with PyTorch's
// output. Loading needs lab course3; Sigmoid and SiLU need course5, sin
// course7; tiny_sigmoid, tiny_misc and tiny_detect also need Conv2d,
// MaxPool2d, BatchNorm2d and Linear.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <utility>

#include "kuiper/graph.hpp"
#include "kuiper/npy.hpp"

namespace kuiper {
namespace {

const std::string kFixtures = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/";

// 1e-4, plus 1e-6 of the value: YOLO box sizes reach hundreds of pixels,
// where float32 itself is only good to ~6e-5 and the 1x1 conv's rounding,
// scaled by the anchor, moves the last few bits (tiny_detect: 3e-4 at 677 px).
float Tolerance(float expected) { return 1e-4f + 1e-6f * std::abs(expected); }

// The largest |a - b| beyond its tolerance (0 if none) and the row-major index.
std::pair<float, size_t> WorstExcess(const sftensor& a, const sftensor& b) {
  const std::vector<float> va = a->values(true), vb = b->values(true);
  std::pair<float, size_t> worst{0.f, 0};
  for (size_t i = 0; i < va.size(); ++i) {
    const float excess = std::abs(va[i] - vb[i]) - Tolerance(vb[i]);
    if (!(excess <= worst.first)) worst = {excess, i};
  }
  return worst;
}

class TinyModel : public ::testing::TestWithParam<std::string> {};

TEST_P(TinyModel, MatchesPyTorch) {
  const std::string base = kFixtures + GetParam();
  RuntimeGraph graph(base + ".pnnx.param", base + ".pnnx.bin");
  graph.Build();
  const std::vector<sftensor> input = NpyToBatch(LoadNpy(base + ".input.npy"));
  const std::vector<sftensor> expected = NpyToBatch(LoadNpy(base + ".output.npy"));
  const std::vector<sftensor> output = graph.Forward(input);
  ASSERT_EQ(output.size(), expected.size());
  for (size_t i = 0; i < output.size(); ++i) {
    ASSERT_EQ(output[i]->raw_shapes(), expected[i]->raw_shapes());
    const auto [excess, at] = WorstExcess(output[i], expected[i]);
    EXPECT_LE(excess, 0.f) << GetParam() << " item " << i << ": worst at row-major index " << at
                           << ", engine " << output[i]->values(true)[at] << ", PyTorch "
                           << expected[i]->values(true)[at];
  }
}

// tiny_detect with its head in pnnx's moduleop form (models/tiny_detect_moduleop.py:
// pnnx_00..pnnx_06 as current pnnx numbers them, and the older pnnx_0..pnnx_6)
// gives exactly the output of our own form of the same operator.
TEST(TinyModelModuleOp, DetectHeadAsPnnxWritesItRunsLikeOurs) {
  const std::vector<sftensor> input = NpyToBatch(LoadNpy(kFixtures + "tiny_detect.input.npy"));
  RuntimeGraph ours(kFixtures + "tiny_detect.pnnx.param", kFixtures + "tiny_detect.pnnx.bin");
  ours.Build();
  const std::vector<float> expected = ours.Forward(input).at(0)->values(true);
  for (const std::string name : {"tiny_detect_moduleop", "tiny_detect_moduleop_old"}) {
    RuntimeGraph graph(kFixtures + name + ".pnnx.param", kFixtures + name + ".pnnx.bin");
    graph.Build();
    EXPECT_EQ(graph.Forward(input).at(0)->values(true), expected) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(LightLayers, TinyModel,
                         ::testing::Values("tiny_expression", "tiny_sin", "tiny_sigmoid",
                                           "tiny_misc", "tiny_detect"));

// Tiny models converted by the REAL pnnx (Tencent ncnn's tools/pnnx, built by
// hand; tools/real_pnnx.py, models/README.md "Real pnnx"), committed in
// models/fixtures/ as *_realpnnx.pnnx.{param,bin}, compared with PyTorch's
// output of the same model on the same input (the fixtures of the same model
// without "_realpnnx"; tiny_shuffle_upsample's model is in tools/real_pnnx.py
// and needs nn.ChannelShuffle and F.upsample). Every other fixture was written
// by our own exporter, which imitates pnnx; these keep what pnnx itself writes running.
struct RealPnnxFixture {
  std::string file;       // models/fixtures/<file>.pnnx.{param,bin}, written by pnnx
  std::string reference;  // models/fixtures/<reference>.{input,output}.npy, from PyTorch
};

void PrintTo(const RealPnnxFixture& f, std::ostream* os) { *os << f.file; }

class RealPnnx : public ::testing::TestWithParam<RealPnnxFixture> {};

TEST_P(RealPnnx, MatchesPyTorch) {
  const RealPnnxFixture& f = GetParam();
  RuntimeGraph graph(kFixtures + f.file + ".pnnx.param", kFixtures + f.file + ".pnnx.bin");
  graph.Build();
  const std::vector<sftensor> input = NpyToBatch(LoadNpy(kFixtures + f.reference + ".input.npy"));
  const std::vector<sftensor> expected =
      NpyToBatch(LoadNpy(kFixtures + f.reference + ".output.npy"));
  const std::vector<sftensor> output = graph.Forward(input);
  ASSERT_EQ(output.size(), expected.size());
  for (size_t i = 0; i < output.size(); ++i) {
    ASSERT_EQ(output[i]->raw_shapes(), expected[i]->raw_shapes()) << f.file;
    const auto [excess, at] = WorstExcess(output[i], expected[i]);
    EXPECT_LE(excess, 0.f) << f.file << " item " << i << ": worst at row-major index " << at
                           << ", engine " << output[i]->values(true)[at] << ", PyTorch "
                           << expected[i]->values(true)[at] << " (models/README.md, Real pnnx)";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, RealPnnx,
    ::testing::Values(RealPnnxFixture{"tiny_detect_realpnnx", "tiny_detect"},
                      RealPnnxFixture{"tiny_detect_realpnnx_moduleop", "tiny_detect"},
                      // Its head as Ultralytics' Detect: pnnx_00..pnnx_06 constants.
                      // PyTorch's output of that form is 3.8e-6 from ours.
                      RealPnnxFixture{"tiny_detect_realpnnx_ultralytics_moduleop", "tiny_detect"},
                      RealPnnxFixture{"tiny_yolo_head_realpnnx", "tiny_yolo_head"},
                      RealPnnxFixture{"tiny_shuffle_upsample_realpnnx", "tiny_shuffle_upsample"}),
    [](const ::testing::TestParamInfo<RealPnnxFixture>& info) { return info.param.file; });

}  // namespace
}  // namespace kuiper
