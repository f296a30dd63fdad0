// course5_layers stretch task: nn.LeakyReLU, a layer whose creator reads a
// parameter. Optional; not part of the lab's grade (label course5_stretch).
// The test reaches the layer only through the registry, as RuntimeGraph does.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper {
namespace {

std::unique_ptr<Layer> Create(const std::string& type, const RuntimeParameter& slope) {
  RuntimeOperator op;
  op.type = type;
  op.name = "leaky";
  if (!std::holds_alternative<std::monostate>(slope)) op.params["negative_slope"] = slope;
  EXPECT_TRUE(LayerRegisterer::HasCreator(type))
      << type << " is not registered: see README \"Stretch: a layer with a parameter\"";
  return LayerRegisterer::CreateLayer(op);
}

sftensor Values(const std::vector<float>& values) {
  sftensor t = TensorCreate({static_cast<uint32_t>(values.size())});
  t->Fill(values);
  return t;
}

TEST(LeakyRelu, ScalesOnlyNegativeValuesBySlope) {
  for (const std::string type : {"nn.LeakyReLU", "F.leaky_relu"}) {
    std::unique_ptr<Layer> layer = Create(type, 0.25f);
    std::vector<sftensor> outputs(1);
    ASSERT_EQ(layer->Forward({Values({-4.f, -0.5f, 0.f, 3.f})}, outputs),
              InferStatus::kInferSuccess);
    // -4 * 0.25 = -1, -0.5 * 0.25 = -0.125; 0 and 3 pass unchanged.
    EXPECT_EQ(outputs[0]->values(), std::vector<float>({-1.f, -0.125f, 0.f, 3.f})) << type;
  }
}

TEST(LeakyRelu, EachLayerKeepsItsOwnSlope) {
  std::unique_ptr<Layer> gentle = Create("nn.LeakyReLU", 0.5f);
  std::unique_ptr<Layer> steep = Create("nn.LeakyReLU", 2.f);
  std::vector<sftensor> a(1), b(1);
  ASSERT_EQ(gentle->Forward({Values({-2.f})}, a), InferStatus::kInferSuccess);
  ASSERT_EQ(steep->Forward({Values({-2.f})}, b), InferStatus::kInferSuccess);
  EXPECT_EQ(a[0]->index(0), -1.f);
  EXPECT_EQ(b[0]->index(0), -4.f);
}

TEST(LeakyRelu, AnIntegerSlopeIsAccepted) {
  std::unique_ptr<Layer> layer = Create("nn.LeakyReLU", 0);  // PNNX writes 0, not 0.0
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({Values({-3.f, 2.f})}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({0.f, 2.f}));
}

TEST(LeakyRelu, AMissingSlopeFailsTheCreatorNamingTheOperator) {
  try {
    Create("nn.LeakyReLU", std::monostate{});
    FAIL() << "a LeakyReLU without negative_slope must throw LayerError";
  } catch (const LayerError& e) {
    EXPECT_NE(std::string(e.what()).find("leaky"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("negative_slope"), std::string::npos) << e.what();
  }
}

TEST(LeakyRelu, ASlopeOfTheWrongTypeFailsTheCreator) {
  EXPECT_THROW(Create("nn.LeakyReLU", std::string("0.1")), LayerError);
}

TEST(LeakyRelu, ChecksTheBatchLikeSigmoid) {
  std::unique_ptr<Layer> layer = Create("nn.LeakyReLU", 0.1f);
  std::vector<sftensor> none, two(2);
  EXPECT_EQ(layer->Forward({}, two), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({Values({1.f})}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({Values({1.f})}, two), InferStatus::kInferFailedInputOutSizeMatchError);
  std::vector<sftensor> one(1);
  EXPECT_EQ(layer->Forward({nullptr}, one), InferStatus::kInferFailedInputEmpty);
}

TEST(LeakyRelu, LeavesItsInputAlone) {
  std::unique_ptr<Layer> layer = Create("nn.LeakyReLU", 0.1f);
  sftensor input = Values({-1.f, 1.f});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({input}, outputs), InferStatus::kInferSuccess);
  EXPECT_NE(outputs[0], input);
  EXPECT_EQ(input->values(), std::vector<float>({-1.f, 1.f}));
}

}  // namespace
}  // namespace kuiper
