// torch.permute (the ONNX importer's Transpose): item dimensions reordered,
// checked by hand and against a naive index loop; the statuses and the dims it
// refuses at creation.
#include <gtest/gtest.h>

#include <numeric>

#include "operand_test_util.hpp"

namespace kuiper::test {
namespace {

std::unique_ptr<Layer> CreatePermute(const std::vector<int>& dims) {
  OperatorWithInputs op("torch.permute", 1);
  op.op().params["dims"] = dims;
  return op.Create();
}

// out[i_0, i_1, i_2] = in[j] with j[dims[d+1]-1] = i_d: the definition, for
// an item of three dimensions.
sftensor NaivePermute3(const ftensor& in, const std::vector<int>& dims) {
  const std::vector<uint32_t>& s = in.raw_shapes();
  std::vector<uint32_t> out_shape(3);
  for (size_t d = 0; d < 3; ++d) out_shape[d] = s[dims[d + 1] - 1];
  sftensor out = TensorCreate(out_shape);
  uint32_t i[3], j[3];
  for (i[0] = 0; i[0] < out_shape[0]; ++i[0]) {
    for (i[1] = 0; i[1] < out_shape[1]; ++i[1]) {
      for (i[2] = 0; i[2] < out_shape[2]; ++i[2]) {
        for (size_t d = 0; d < 3; ++d) j[dims[d + 1] - 1] = i[d];
        out->at(i[0], i[1], i[2]) = in.at(j[0], j[1], j[2]);
      }
    }
  }
  return out;
}

TEST(Permute, TransposesAMatrix) {
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(
      CreatePermute({0, 2, 1})->Forward({RowMajorTensor({2, 3}, {0, 1, 2, 3, 4, 5})}, outputs),
      InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), (std::vector<uint32_t>{3, 2}));
  EXPECT_EQ(outputs[0]->values(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(Permute, EveryOrderOfThreeDimensionsMatchesTheDefinition) {
  std::vector<int> order = {1, 2, 3};
  do {
    const std::vector<int> dims = {0, order[0], order[1], order[2]};
    const std::vector<sftensor> inputs = {SeededTensor({2, 3, 4}, 1), SeededTensor({2, 3, 4}, 2)};
    std::vector<sftensor> outputs(2);
    ASSERT_EQ(CreatePermute(dims)->Forward(inputs, outputs), InferStatus::kInferSuccess);
    for (size_t n = 0; n < 2; ++n) {
      EXPECT_TRUE(TensorIsSame(outputs[n], NaivePermute3(*inputs[n], dims), 0.f))
          << "dims " << order[0] << order[1] << order[2] << " item " << n;
    }
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(Permute, NegativeDimsCountFromTheEnd) {
  std::vector<sftensor> outputs(1);
  const sftensor input = SeededTensor({2, 3, 4}, 3);
  ASSERT_EQ(CreatePermute({0, -1, 1, 2})->Forward({input}, outputs), InferStatus::kInferSuccess);
  EXPECT_TRUE(TensorIsSame(outputs[0], NaivePermute3(*input, {0, 3, 1, 2}), 0.f));
}

TEST(Permute, AnItemOfAnotherRankIsAShapeError) {
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(CreatePermute({0, 2, 1})->Forward({SeededTensor({2, 3, 4}, 1)}, outputs),
            InferStatus::kInferFailedShapeError);
}

TEST(Permute, InputChecksAreReported) {
  const auto layer = CreatePermute({0, 2, 1});
  std::vector<sftensor> one(1), none;
  EXPECT_EQ(layer->Forward({}, one), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({nullptr}, one), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({SeededTensor({2, 2}, 1)}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({SeededTensor({2, 2}, 1), SeededTensor({2, 2}, 2)}, one),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(Permute, CreationRejectsDimsThatAreNotAPermutation) {
  OperatorWithInputs op("torch.permute", 1);
  op.op().params["dims"] = std::vector<int>{0, 1, 1};
  ExpectCreationError(op.op(), "must be a permutation");
}

TEST(Permute, CreationRejectsMovingTheBatch) {
  OperatorWithInputs op("torch.permute", 1);
  op.op().params["dims"] = std::vector<int>{1, 0, 2};
  ExpectCreationError(op.op(), "keeps the batch (0) first");
}

TEST(Permute, CreationRejectsMoreThanSevenItemDimensions) {
  OperatorWithInputs op("torch.permute", 1);
  op.op().params["dims"] = std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8};
  ExpectCreationError(op.op(), "2 to 8 dimensions");
}

TEST(Permute, CreationNeedsDims) {
  ExpectCreationError(OperatorWithInputs("torch.permute", 1).op(), "'dims' is missing");
}

}  // namespace
}  // namespace kuiper::test
