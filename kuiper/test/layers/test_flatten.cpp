// torch.flatten / nn.Flatten, through Tensor::Flatten of lab course2_padding.
#include <gtest/gtest.h>

#include <numeric>

#include "../op_test.hpp"
#include "kuiper/layer.hpp"

namespace kuiper {
namespace {

std::unique_ptr<Layer> CreateFlatten(int start_dim, int end_dim,
                                     const std::string& type = "torch.flatten") {
  RuntimeOperator op;
  op.type = type;
  op.name = "flatten";
  op.params["start_dim"] = start_dim;
  op.params["end_dim"] = end_dim;
  return LayerRegisterer::CreateLayer(op);
}

sftensor Iota(const std::vector<uint32_t>& shape) {
  sftensor t = TensorCreate(shape);
  std::vector<float> values(t->size());
  std::iota(values.begin(), values.end(), 0.f);
  t->Fill(values, /*row_major=*/true);
  return t;
}

// Through the op-test harness (op_test.hpp): every mode, exactly the input's
// values in row-major order.
TEST(Flatten, WholeItemInRowMajorOrder) {
  const auto flat = [](const std::vector<sftensor>& item) {
    sftensor out = TensorCreate({24});
    out->Fill(item[0]->values(/*row_major=*/true), /*row_major=*/true);
    return std::vector<sftensor>{out};
  };
  for (const std::string type : {"torch.flatten", "nn.Flatten"}) {
    SCOPED_TRACE(type);
    test::TestOperator(type, {{"start_dim", 1}, {"end_dim", -1}}, {},
                       {test::SeededItems({2, 3, 4}, 1)}, flat, 0.f);
  }
}

TEST(Flatten, ExplicitEndDimensionEqualsMinusOne) {
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(CreateFlatten(1, 3)->Forward({Iota({2, 3, 4})}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({24}));
}

TEST(Flatten, InnerDimensionsOnly) {
  // (N, 2, 3, 4) with start_dim=2: (N, 2, 12).
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(CreateFlatten(2, -1)->Forward({Iota({2, 3, 4})}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({2, 12}));
  EXPECT_EQ(outputs[0]->at(0, 1, 0), 12.f);
  // (N, 2, 3, 4) with start_dim=1, end_dim=2: (N, 6, 4).
  ASSERT_EQ(CreateFlatten(1, 2)->Forward({Iota({2, 3, 4})}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({6, 4}));
  EXPECT_EQ(outputs[0]->at(0, 5, 3), 23.f);
}

TEST(Flatten, EveryItemOfABatch) {
  std::vector<sftensor> outputs(2);
  ASSERT_EQ(CreateFlatten(1, -1)->Forward({Iota({2, 1, 1}), Iota({1, 2, 1})}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({0, 1}));
  EXPECT_EQ(outputs[1]->values(), std::vector<float>({0, 1}));
}

TEST(Flatten, LeavesInputUnchanged) {
  const sftensor x = Iota({2, 2, 2});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(CreateFlatten(1, -1)->Forward({x}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(x->raw_shapes(), std::vector<uint32_t>({2, 2, 2}));
}

TEST(Flatten, DimensionsOutsideTheItemAreAShapeError) {
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(CreateFlatten(1, 4)->Forward({Iota({2, 3, 4})}, outputs),
            InferStatus::kInferFailedShapeError);
  EXPECT_EQ(CreateFlatten(-4, -1)->Forward({Iota({2, 3, 4})}, outputs),
            InferStatus::kInferFailedShapeError);  // -4 is the batch
  EXPECT_EQ(CreateFlatten(3, 2)->Forward({Iota({2, 3, 4})}, outputs),
            InferStatus::kInferFailedShapeError);
}

TEST(Flatten, InputChecksAreReported) {
  auto layer = CreateFlatten(1, -1);
  std::vector<sftensor> outputs(1), none;
  EXPECT_EQ(layer->Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({nullptr}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({Iota({2})}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({Iota({2}), Iota({2})}, outputs),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(Flatten, MergingTheBatchIsRejectedAtCreation) {
  EXPECT_THROW(CreateFlatten(0, -1), LayerError);
  EXPECT_THROW(CreateFlatten(1, 0), LayerError);
}

}  // namespace
}  // namespace kuiper
