// nn.SiLU: x * sigmoid(x), through the sigmoid of lab course5_layers.
#include <gtest/gtest.h>

#include <cmath>

#include "kuiper/layer.hpp"

namespace kuiper {
namespace {

std::unique_ptr<Layer> CreateSilu(const std::string& type = "nn.SiLU") {
  RuntimeOperator op;
  op.type = type;
  op.name = "silu";
  return LayerRegisterer::CreateLayer(op);
}

TEST(Silu, MatchesXTimesSigmoid) {
  for (const std::string type : {"nn.SiLU", "F.silu"}) {
    sftensor x = TensorCreate(2, 3, 4);
    for (uint32_t i = 0; i < x->size(); ++i) x->index(i) = -6.f + 0.5f * static_cast<float>(i);
    std::vector<sftensor> outputs(1);
    ASSERT_EQ(CreateSilu(type)->Forward({x}, outputs), InferStatus::kInferSuccess);
    for (uint32_t i = 0; i < x->size(); ++i) {
      const float v = x->index(i);
      EXPECT_NEAR(outputs[0]->index(i), v / (1.f + std::exp(-v)), 1e-6f) << type << " " << v;
    }
  }
}

TEST(Silu, LeavesInputUnchanged) {
  sftensor x = TensorCreate({3});
  x->Fill({-1, 0, 1});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(CreateSilu()->Forward({x}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(x->values(), std::vector<float>({-1, 0, 1}));
  EXPECT_EQ(outputs[0]->index(1), 0.f);
}

TEST(Silu, InputChecksAreReported) {
  auto layer = CreateSilu();
  std::vector<sftensor> outputs(1), none;
  EXPECT_EQ(layer->Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({nullptr}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({TensorCreate({2})}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({TensorCreate({2}), TensorCreate({2})}, outputs),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

}  // namespace
}  // namespace kuiper
