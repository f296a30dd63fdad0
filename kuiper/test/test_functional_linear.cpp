// F.linear with a computed weight (y = x W^T, the ONNX importer's dense for a
// MatMul whose B is not a constant) against a naive loop, and the shapes it refuses.
#include <gtest/gtest.h>

#include "operand_test_util.hpp"

namespace kuiper::test {
namespace {

// y[c][i][o] = sum_k x[c][i][k] * w[o][k], written out.
sftensor NaiveLinear(const ftensor& x, const ftensor& w, const std::vector<uint32_t>& out_shape) {
  sftensor y = TensorCreate(out_shape);
  for (uint32_t c = 0; c < x.channels(); ++c) {
    for (uint32_t i = 0; i < x.rows(); ++i) {
      for (uint32_t o = 0; o < w.rows(); ++o) {
        double sum = 0;
        for (uint32_t k = 0; k < x.cols(); ++k) sum += x.at(c, i, k) * w.at(0, o, k);
        y->at(c, i, o) = static_cast<float>(sum);
      }
    }
  }
  return y;
}

TEST(FunctionalLinear, MapsEachRowOfAMatrix) {
  ExpectMatchesNaive("F.linear", {3, 4}, {5, 4}, {3, 5}, NaiveLinear);
}

TEST(FunctionalLinear, MapsEachRowOfEveryChannel) {
  ExpectMatchesNaive("F.linear", {2, 3, 4}, {6, 4}, {2, 3, 6}, NaiveLinear);
}

TEST(FunctionalLinear, MapsAVector) {
  ExpectMatchesNaive("F.linear", {4}, {3, 4}, {3}, NaiveLinear);
}

TEST(FunctionalLinear, InFeaturesThatDifferAreAShapeError) {
  EXPECT_EQ(ForwardStatus("F.linear", {SeededTensor({2, 3}, 1), SeededTensor({4, 2}, 2)}),
            InferStatus::kInferFailedShapeError);
}

TEST(FunctionalLinear, AWeightThatIsNotAMatrixIsAShapeError) {
  EXPECT_EQ(ForwardStatus("F.linear", {SeededTensor({2, 3}, 1), SeededTensor({2, 4, 3}, 2)}),
            InferStatus::kInferFailedShapeError);
}

TEST(FunctionalLinear, CreationRejectsABiasOperand) {
  // The statuses it shares with torch.matmul: test_two_operand_layers.cpp.
  ExpectCreationError(OperatorWithInputs("F.linear", 3).op(), "a bias operand is not supported");
}

}  // namespace
}  // namespace kuiper::test
