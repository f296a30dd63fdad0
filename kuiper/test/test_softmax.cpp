// nn.Softmax along each dimension, against PyTorch
// (kuiper/test/data/layers/make_light_layers.py) and a naive loop.
#include <gtest/gtest.h>

#include <cmath>

#include "kuiper/layer.hpp"
#include "kuiper/npy.hpp"

namespace kuiper {
namespace {

const std::string kSoftmaxData = std::string(KUIPER_SOURCE_DIR) + "/kuiper/test/data/layers/light/";

std::unique_ptr<Layer> CreateSoftmax(int dim) {
  RuntimeOperator op;
  op.type = "nn.Softmax";
  op.name = "softmax";
  op.params["dim"] = dim;
  return LayerRegisterer::CreateLayer(op);
}

void ExpectSoftmaxMatchesTorch(int dim) {
  const std::vector<sftensor> inputs = NpyToBatch(LoadNpy(kSoftmaxData + "softmax_input.npy"));
  const std::vector<sftensor> expected =
      NpyToBatch(LoadNpy(kSoftmaxData + "softmax_dim" + std::to_string(dim) + ".npy"));
  std::vector<sftensor> outputs(inputs.size());
  ASSERT_EQ(CreateSoftmax(dim)->Forward(inputs, outputs), InferStatus::kInferSuccess);
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_TRUE(TensorIsSame(outputs[i], expected[i], 1e-4f)) << "dim " << dim << " item " << i;
  }
}

TEST(Softmax, ChannelsMatchTorch) { ExpectSoftmaxMatchesTorch(1); }
TEST(Softmax, RowsMatchTorch) { ExpectSoftmaxMatchesTorch(2); }
TEST(Softmax, ColumnsMatchTorch) { ExpectSoftmaxMatchesTorch(3); }
TEST(Softmax, NegativeDimensionMatchesTorch) { ExpectSoftmaxMatchesTorch(-1); }

TEST(Softmax, VectorSumsToOneAndMatchesFormula) {
  sftensor x = TensorCreate({4});
  x->Fill({1, 2, 3, 4});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(CreateSoftmax(1)->Forward({x}, outputs), InferStatus::kInferSuccess);
  const float sum = std::exp(1.f) + std::exp(2.f) + std::exp(3.f) + std::exp(4.f);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(outputs[0]->index(i), std::exp(static_cast<float>(i + 1)) / sum, 1e-6f);
  }
}

TEST(Softmax, HugeValuesStayFinite) {
  sftensor x = TensorCreate({3});
  x->Fill({1000, 1000, -1000});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(CreateSoftmax(-1)->Forward({x}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({0.5f, 0.5f, 0.f}));
}

TEST(Softmax, DimensionBeyondTheRankIsAShapeError) {
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(CreateSoftmax(2)->Forward({TensorCreate({3})}, outputs),
            InferStatus::kInferFailedShapeError);
  EXPECT_EQ(CreateSoftmax(-2)->Forward({TensorCreate({3})}, outputs),
            InferStatus::kInferFailedShapeError);
}

TEST(Softmax, InputChecksAreReported) {
  auto layer = CreateSoftmax(1);
  std::vector<sftensor> outputs(1), none;
  EXPECT_EQ(layer->Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({nullptr}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({TensorCreate({3})}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({TensorCreate({3}), TensorCreate({3})}, outputs),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(Softmax, BatchDimensionIsRejectedAtCreation) { EXPECT_THROW(CreateSoftmax(0), LayerError); }

}  // namespace
}  // namespace kuiper
