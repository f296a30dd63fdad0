// torch.matmul (the ONNX importer's batch matmul) against a naive triple loop,
// and the shapes it refuses.
#include <gtest/gtest.h>

#include "operand_test_util.hpp"

namespace kuiper::test {
namespace {

// C[c] = A[c or 0] * B[c or 0] by the textbook loop; a side with one channel
// is used for every channel of the other.
sftensor NaiveMatmul(const ftensor& a, const ftensor& b, const std::vector<uint32_t>& out_shape) {
  sftensor y = TensorCreate(out_shape);
  for (uint32_t c = 0; c < y->channels(); ++c) {
    for (uint32_t i = 0; i < a.rows(); ++i) {
      for (uint32_t j = 0; j < b.cols(); ++j) {
        double sum = 0;
        for (uint32_t p = 0; p < a.cols(); ++p) {
          sum += a.at(a.channels() == 1 ? 0 : c, i, p) * b.at(b.channels() == 1 ? 0 : c, p, j);
        }
        y->at(c, i, j) = static_cast<float>(sum);
      }
    }
  }
  return y;
}

TEST(Matmul, TwoMatricesGiveAMatrix) {
  ExpectMatchesNaive("torch.matmul", {3, 4}, {4, 5}, {3, 5}, NaiveMatmul);
}

TEST(Matmul, BatchesOfMatricesMultiplyPairwise) {
  ExpectMatchesNaive("torch.matmul", {2, 3, 4}, {2, 4, 5}, {2, 3, 5}, NaiveMatmul);
}

TEST(Matmul, ASingleMatrixOfABroadcastsOverB) {
  ExpectMatchesNaive("torch.matmul", {1, 3, 4}, {3, 4, 2}, {3, 3, 2}, NaiveMatmul);
}

TEST(Matmul, ASingleMatrixOfBBroadcastsOverA) {
  ExpectMatchesNaive("torch.matmul", {3, 2, 4}, {1, 4, 5}, {3, 2, 5}, NaiveMatmul);
}

TEST(Matmul, AMatrixTimesABatchGivesABatch) {
  ExpectMatchesNaive("torch.matmul", {2, 4}, {3, 4, 2}, {3, 2, 2}, NaiveMatmul);
}

TEST(Matmul, TheBmmNameIsTheSameLayer) {
  EXPECT_EQ(ForwardStatus("torch.bmm", {SeededTensor({2, 2}, 1), SeededTensor({2, 2}, 2)}),
            InferStatus::kInferSuccess);
}

TEST(Matmul, InnerSizesThatDifferAreAShapeError) {
  EXPECT_EQ(ForwardStatus("torch.matmul", {SeededTensor({2, 3}, 1), SeededTensor({4, 2}, 2)}),
            InferStatus::kInferFailedShapeError);
}

TEST(Matmul, BatchesOfDifferentSizesAreAShapeError) {
  EXPECT_EQ(ForwardStatus("torch.matmul", {SeededTensor({2, 2, 3}, 1), SeededTensor({3, 3, 2}, 2)}),
            InferStatus::kInferFailedShapeError);
}

TEST(Matmul, AVectorIsAShapeError) {
  // 1-D operands are the importer's business (it reshapes them to matrices).
  EXPECT_EQ(ForwardStatus("torch.matmul", {SeededTensor({3}, 1), SeededTensor({3, 2}, 2)}),
            InferStatus::kInferFailedShapeError);
}

TEST(Matmul, CreationNamesItsOperands) {
  // The statuses it shares with F.linear: test_two_operand_layers.cpp.
  ExpectCreationError(OperatorWithInputs("torch.matmul", 3).op(), "needs 2 inputs (A, B), has 3");
}

}  // namespace
}  // namespace kuiper::test
