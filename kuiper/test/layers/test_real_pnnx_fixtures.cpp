// Tiny models converted by the REAL pnnx (Tencent ncnn's tools/pnnx, built by
// hand; tools/real_pnnx.py, models/README.md "Real pnnx"), committed in
// models/fixtures/ as *_realpnnx.pnnx.{param,bin}, run through RuntimeGraph
// and compared with PyTorch's output of the same model on the same input
// (the fixtures of the same model without "_realpnnx": tiny_detect.*,
// tiny_yolo_head.*, tiny_shuffle_upsample.*; the last one's model is in
// tools/real_pnnx.py and needs nn.ChannelShuffle and F.upsample). Every other fixture was written
// by our own exporter, which imitates pnnx; these make sure what pnnx itself writes keeps running.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "kuiper/graph.hpp"
#include "kuiper/npy.hpp"

namespace kuiper {
namespace {

const std::string kFixtures = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/";

// As in test_light_fixtures.cpp: 1e-4 plus 1e-6 of the value, since YOLO box
// sizes reach hundreds of pixels where float32 is good to ~6e-5.
float Tolerance(float expected) { return 1e-4f + 1e-6f * std::abs(expected); }

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
    const std::vector<float> got = output[i]->values(true), want = expected[i]->values(true);
    float worst = 0.f;
    size_t at = 0;
    for (size_t k = 0; k < got.size(); ++k) {
      const float excess = std::abs(got[k] - want[k]) - Tolerance(want[k]);
      if (!(excess <= worst)) worst = excess, at = k;
    }
    EXPECT_LE(worst, 0.f) << f.file << " item " << i << ": worst at row-major index " << at
                          << ", engine " << got[at] << ", PyTorch " << want[at]
                          << " (models/README.md, Real pnnx)";
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
