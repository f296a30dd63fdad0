// Element-wise activations of the core: ReLU, ReLU6, Hardsigmoid, Hardswish.
// Expected values are PyTorch's definitions written out in the test.
#include <gtest/gtest.h>

#include <algorithm>

#include "kuiper/layer.hpp"
#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

std::unique_ptr<Layer> Create(const std::string& type) {
  RuntimeOperator op;
  op.type = type;
  op.name = "act";
  return LayerRegisterer::CreateLayer(op);
}

// -5, -4.5, ..., 6.5 across two channels, so every branch of the functions is hit.
sftensor SignedRamp() {
  sftensor t = TensorCreate(2, 3, 4);
  for (uint32_t i = 0; i < t->size(); ++i) t->index(i) = -5.f + 0.5f * static_cast<float>(i);
  return t;
}

float Relu6(float x) { return std::min(std::max(x, 0.f), 6.f); }

void ExpectMaps(const std::string& type, float (*reference)(float)) {
  std::unique_ptr<Layer> layer = Create(type);
  const sftensor input = SignedRamp();
  const std::vector<float> before = input->values();
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({input}, outputs), InferStatus::kInferSuccess) << type;
  ASSERT_EQ(outputs[0]->raw_shapes(), input->raw_shapes()) << type;
  for (uint32_t i = 0; i < input->size(); ++i) {
    EXPECT_NEAR(outputs[0]->index(i), reference(input->index(i)), 1e-6f)
        << type << " at x = " << input->index(i);
  }
  EXPECT_EQ(input->values(), before) << type << " must not change its input";
}

TEST(Activations, ReluClampsNegativesToZero) {
  ExpectMaps("nn.ReLU", [](float x) { return x > 0 ? x : 0.f; });
  ExpectMaps("F.relu", [](float x) { return x > 0 ? x : 0.f; });
}

TEST(Activations, Relu6ClampsToZeroSix) {
  ExpectMaps("nn.ReLU6", [](float x) { return x < 0 ? 0.f : x > 6 ? 6.f : x; });
}

TEST(Activations, HardsigmoidIsRelu6OfXPlusThreeOverSix) {
  ExpectMaps("nn.Hardsigmoid", [](float x) { return Relu6(x + 3) / 6; });
  ExpectMaps("F.hardsigmoid", [](float x) { return Relu6(x + 3) / 6; });
}

TEST(Activations, HardswishIsXTimesHardsigmoid) {
  ExpectMaps("nn.Hardswish", [](float x) { return x * Relu6(x + 3) / 6; });
  ExpectMaps("F.hardswish", [](float x) { return x * Relu6(x + 3) / 6; });
}

TEST(Activations, ReluHandlesEveryItemOfABatch) {
  std::unique_ptr<Layer> layer = Create("nn.ReLU");
  sftensor a = TensorCreate({3});
  a->Fill({-1, 0, 2});
  sftensor b = TensorCreate({2, 2});
  b->Fill({3, -4, -5, 6});
  std::vector<sftensor> outputs(2);
  ASSERT_EQ(layer->Forward({a, b}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({0, 0, 2}));
  EXPECT_EQ(outputs[1]->raw_shapes(), std::vector<uint32_t>({2, 2}));
  EXPECT_EQ(outputs[1]->values(), std::vector<float>({3, 0, 0, 6}));
}

TEST(Activations, EmptyInputIsReported) {
  std::unique_ptr<Layer> layer = Create("nn.ReLU");
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(layer->Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({nullptr}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({std::make_shared<ftensor>()}, outputs),
            InferStatus::kInferFailedInputEmpty);
}

TEST(Activations, NoOutputSlotsIsReported) {
  std::unique_ptr<Layer> layer = Create("nn.Hardswish");
  std::vector<sftensor> outputs;
  EXPECT_EQ(layer->Forward({SignedRamp()}, outputs), InferStatus::kInferFailedOutputEmpty);
}

TEST(Activations, BatchSizeMismatchIsReported) {
  std::unique_ptr<Layer> layer = Create("nn.ReLU6");
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(layer->Forward({SignedRamp(), SignedRamp()}, outputs),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(Activations, EveryTypeNameIsRegistered) {
  for (const char* type : {"nn.ReLU", "F.relu", "nn.ReLU6", "nn.Hardsigmoid", "F.hardsigmoid",
                           "nn.Hardswish", "F.hardswish", "nn.SiLU", "F.silu"}) {
    EXPECT_TRUE(LayerRegisterer::HasCreator(type)) << type;
  }
}

}  // namespace
}  // namespace kuiper
