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

// The expected output of a flatten to `shape`: the item's values, row-major.
test::OpReference FlattenedTo(const std::vector<uint32_t>& shape) {
  return [shape](const std::vector<sftensor>& item) {
    sftensor out = TensorCreate(shape);
    out->Fill(item[0]->values(/*row_major=*/true), /*row_major=*/true);
    return std::vector<sftensor>{out};
  };
}

// Through the op-test harness (op_test.hpp), as the next two tests: every
// mode, exactly the input's values in row-major order.
TEST(Flatten, WholeItemInRowMajorOrder) {
  for (const std::string type : {"torch.flatten", "nn.Flatten"}) {
    SCOPED_TRACE(type);
    test::TestOperator(type, {{"start_dim", 1}, {"end_dim", -1}}, {},
                       {test::SeededItems({2, 3, 4}, 1)}, FlattenedTo({24}), 0.f);
  }
}

// end_dim 3 is the last dimension of a (N, 2, 3, 4) operand, as -1 is.
TEST(Flatten, ExplicitEndDimensionEqualsMinusOne) {
  test::TestOperator("torch.flatten", {{"start_dim", 1}, {"end_dim", 3}}, {},
                     {test::SeededItems({2, 3, 4}, 4)}, FlattenedTo({24}), 0.f);
}

TEST(Flatten, InnerDimensionsOnly) {
  // (N, 2, 3, 4) with start_dim=2: (N, 2, 12); with start_dim=1, end_dim=2: (N, 6, 4).
  test::TestOperator("torch.flatten", {{"start_dim", 2}, {"end_dim", -1}}, {},
                     {test::SeededItems({2, 3, 4}, 2)}, FlattenedTo({2, 12}), 0.f);
  test::TestOperator("torch.flatten", {{"start_dim", 1}, {"end_dim", 2}}, {},
                     {test::SeededItems({2, 3, 4}, 3)}, FlattenedTo({6, 4}), 0.f);
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
