// torch.cat: items of several operands joined along one dimension.
#include <gtest/gtest.h>

#include <numeric>

#include "kuiper/layer.hpp"

namespace kuiper {
namespace {

std::unique_ptr<Layer> CreateCat(int dim) {
  RuntimeOperator op;
  op.type = "torch.cat";
  op.name = "cat";
  op.params["dim"] = dim;
  return LayerRegisterer::CreateLayer(op);
}

sftensor IotaFrom(const std::vector<uint32_t>& shape, float start) {
  sftensor t = TensorCreate(shape);
  std::vector<float> values(t->size());
  std::iota(values.begin(), values.end(), start);
  t->Fill(values, /*row_major=*/true);
  return t;
}

// Naive row-major concatenation of two tensors along item axis `axis`.
std::vector<float> NaiveCat(const sftensor& a, const sftensor& b, size_t axis) {
  const std::vector<uint32_t> sa = a->raw_shapes(), sb = b->raw_shapes();
  size_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= sa[d];
  for (size_t d = axis + 1; d < sa.size(); ++d) inner *= sa[d];
  const std::vector<float> va = a->values(true), vb = b->values(true);
  std::vector<float> out;
  for (size_t o = 0; o < outer; ++o) {
    out.insert(out.end(), va.begin() + o * sa[axis] * inner,
               va.begin() + (o + 1) * sa[axis] * inner);
    out.insert(out.end(), vb.begin() + o * sb[axis] * inner,
               vb.begin() + (o + 1) * sb[axis] * inner);
  }
  return out;
}

TEST(Cat, JoinsChannels) {
  auto layer = CreateCat(1);
  const sftensor a = IotaFrom({2, 3, 4}, 0), b = IotaFrom({3, 3, 4}, 100);
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({a, b}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({5, 3, 4}));
  EXPECT_EQ(outputs[0]->values(true), NaiveCat(a, b, 0));
}

TEST(Cat, JoinsRowsAndColumns) {
  const sftensor a = IotaFrom({2, 3, 4}, 0), rows = IotaFrom({2, 1, 4}, 100),
                 cols = IotaFrom({2, 3, 2}, 200);
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(CreateCat(2)->Forward({a, rows}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({2, 4, 4}));
  EXPECT_EQ(outputs[0]->values(true), NaiveCat(a, rows, 1));
  ASSERT_EQ(CreateCat(-1)->Forward({a, cols}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({2, 3, 6}));
  EXPECT_EQ(outputs[0]->values(true), NaiveCat(a, cols, 2));
}

TEST(Cat, JoinsOneAndTwoDimensionalItems) {
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(CreateCat(1)->Forward({IotaFrom({3}, 0), IotaFrom({2}, 10)}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({0, 1, 2, 10, 11}));
  const sftensor a = IotaFrom({2, 3}, 0), b = IotaFrom({2, 1}, 10);
  ASSERT_EQ(CreateCat(-1)->Forward({a, b}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(true), NaiveCat(a, b, 1));
  ASSERT_EQ(CreateCat(-2)->Forward({a, a}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({4, 3}));
}

TEST(Cat, JoinsEachItemOfABatchWithItsOwnPartners) {
  // Operands A and B, batch 2: inputs are {A0, A1, B0, B1}.
  const sftensor a0 = IotaFrom({1, 1, 2}, 0), a1 = IotaFrom({1, 1, 2}, 10);
  const sftensor b0 = IotaFrom({1, 1, 2}, 20), b1 = IotaFrom({1, 1, 2}, 30);
  std::vector<sftensor> outputs(2);
  ASSERT_EQ(CreateCat(1)->Forward({a0, a1, b0, b1}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({0, 1, 20, 21}));
  EXPECT_EQ(outputs[1]->values(), std::vector<float>({10, 11, 30, 31}));
}

TEST(Cat, JoinsThreeOperands) {
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(CreateCat(1)->Forward(
                {IotaFrom({1, 1, 1}, 1), IotaFrom({2, 1, 1}, 2), IotaFrom({1, 1, 1}, 9)}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({1, 2, 3, 9}));
}

TEST(Cat, OtherDimensionsMustMatch) {
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(CreateCat(1)->Forward({IotaFrom({2, 3, 4}, 0), IotaFrom({2, 3, 5}, 0)}, outputs),
            InferStatus::kInferFailedShapeError);
  EXPECT_EQ(CreateCat(1)->Forward({IotaFrom({2, 3, 4}, 0), IotaFrom({12}, 0)}, outputs),
            InferStatus::kInferFailedShapeError);
}

TEST(Cat, DimensionBeyondTheRankIsAShapeError) {
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(CreateCat(3)->Forward({IotaFrom({2, 3}, 0), IotaFrom({2, 3}, 0)}, outputs),
            InferStatus::kInferFailedShapeError);
  EXPECT_EQ(CreateCat(-3)->Forward({IotaFrom({2, 3}, 0), IotaFrom({2, 3}, 0)}, outputs),
            InferStatus::kInferFailedShapeError);  // the batch dimension
}

TEST(Cat, InputChecksAreReported) {
  auto layer = CreateCat(1);
  std::vector<sftensor> outputs(2), none;
  EXPECT_EQ(layer->Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({IotaFrom({2}, 0), nullptr}, outputs),
            InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({IotaFrom({2}, 0)}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({IotaFrom({2}, 0), IotaFrom({2}, 0), IotaFrom({2}, 0)}, outputs),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(Cat, BatchDimensionIsRejectedAtCreation) { EXPECT_THROW(CreateCat(0), LayerError); }

}  // namespace
}  // namespace kuiper
