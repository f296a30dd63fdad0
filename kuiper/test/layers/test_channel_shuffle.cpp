// Operator types the real pnnx writes and our own exporter does not
// (models/README.md, "Real pnnx"): nn.ChannelShuffle (ShuffleNet) and
// F.upsample (a traced bilinear F.interpolate). Expected values are PyTorch's:
//   torch.nn.ChannelShuffle(g)(torch.arange(6.).view(1, 6, 1, 1))
//   F.upsample(torch.arange(4.).view(1, 1, 2, 2), scale_factor=2.0,
//              mode="bilinear", align_corners=True)
#include <gtest/gtest.h>

#include "../op_test.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layer.hpp"

namespace kuiper {
namespace {

RuntimeOperator ShuffleOp(int groups) {
  RuntimeOperator op;
  op.type = "nn.ChannelShuffle";
  op.name = "channelshuffle_0";
  op.params["groups"] = groups;
  return op;
}

// A (C, H, W) item whose channel c holds c everywhere.
sftensor ChannelIndex(uint32_t channels, uint32_t rows, uint32_t cols) {
  sftensor t = TensorCreate({channels, rows, cols});
  for (uint32_t c = 0; c < channels; ++c) t->slice(c).fill(static_cast<float>(c));
  return t;
}

std::vector<float> ChannelOrder(const ftensor& t) {
  std::vector<float> order;
  for (uint32_t c = 0; c < t.channels(); ++c) order.push_back(t.at(c, 0, 0));
  return order;
}

TEST(ChannelShuffle, TwoGroupsInterleaveLikePyTorch) {
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(LayerRegisterer::CreateLayer(ShuffleOp(2))->Forward({ChannelIndex(6, 2, 3)}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({6, 2, 3}));
  EXPECT_EQ(ChannelOrder(*outputs[0]), std::vector<float>({0, 3, 1, 4, 2, 5}))
      << "output channel k * g + i is input channel i * (C / g) + k";
}

TEST(ChannelShuffle, ThreeGroupsInterleaveLikePyTorch) {
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(LayerRegisterer::CreateLayer(ShuffleOp(3))->Forward({ChannelIndex(6, 1, 1)}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(ChannelOrder(*outputs[0]), std::vector<float>({0, 2, 4, 1, 3, 5}));
}

// Through the op-test harness (op_test.hpp): in every mode and for every item
// of a batch, whole H x W planes of random values move as the definition says.
TEST(ChannelShuffle, WholePlanesMoveInEveryMode) {
  for (const uint32_t groups : {2u, 3u}) {
    SCOPED_TRACE(fmt::format("groups={}", groups));
    const auto shuffled = [groups](const std::vector<sftensor>& item) {
      const ftensor& x = *item[0];
      sftensor out = TensorCreate(x.raw_shapes());
      const uint32_t per_group = x.channels() / groups;
      for (uint32_t i = 0; i < groups; ++i) {
        for (uint32_t k = 0; k < per_group; ++k)
          out->slice(k * groups + i) = x.slice(i * per_group + k);
      }
      return std::vector<sftensor>{out};
    };
    test::TestOperator("nn.ChannelShuffle", {{"groups", static_cast<int>(groups)}}, {},
                       {test::SeededItems({6, 2, 3}, groups)}, shuffled, 0.f);
  }
}

TEST(ChannelShuffle, ChannelsNotDivisibleByGroupsAreReported) {
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(LayerRegisterer::CreateLayer(ShuffleOp(4))->Forward({ChannelIndex(6, 1, 1)}, outputs),
            InferStatus::kInferFailedChannelParameterError);
}

TEST(ChannelShuffle, NonPositiveGroupsAreRejectedNamingTheOperator) {
  try {
    LayerRegisterer::CreateLayer(ShuffleOp(0));
    FAIL() << "groups=0 was accepted";
  } catch (const LayerError& e) {
    EXPECT_NE(std::string(e.what()).find("channelshuffle_0"), std::string::npos) << e.what();
  }
}

TEST(FUpsample, IsFInterpolateUnderItsOldName) {
  RuntimeOperator op;
  op.type = "F.upsample";
  op.name = "F.upsample_2";
  op.params["mode"] = std::string("bilinear");
  op.params["align_corners"] = true;
  op.params["scale_factor"] = std::vector<float>{2.f, 2.f};
  sftensor x = TensorCreate({1, 2, 2});
  x->Fill({0, 1, 2, 3}, /*row_major=*/true);
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(LayerRegisterer::CreateLayer(op)->Forward({x}, outputs), InferStatus::kInferSuccess);
  const std::vector<float> torch = {0.f,     1.f / 3, 2.f / 3, 1.f,     2.f / 3, 1.f,
                                    4.f / 3, 5.f / 3, 4.f / 3, 5.f / 3, 2.f,     7.f / 3,
                                    2.f,     7.f / 3, 8.f / 3, 3.f};
  const std::vector<float> got = outputs[0]->values(true);
  ASSERT_EQ(got.size(), torch.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], torch[i], 1e-6f) << "index " << i;
}

}  // namespace
}  // namespace kuiper
