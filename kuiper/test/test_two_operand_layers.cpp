// The checks torch.matmul and F.linear share (TwoOperandLayer): inputs arrive
// as {A0..An-1, B0..Bn-1}, and each wrong arrangement has its own status.
#include <gtest/gtest.h>

#include "operand_test_util.hpp"

namespace kuiper::test {
namespace {

class TwoOperandLayers : public ::testing::TestWithParam<std::string> {
 protected:
  InferStatus Run(const std::vector<sftensor>& inputs, size_t slots) const {
    return ForwardStatus(GetParam(), inputs, slots);
  }
  const sftensor a_ = SeededTensor({2, 2}, 1), b_ = SeededTensor({2, 2}, 2);
};

TEST_P(TwoOperandLayers, NoInputsIsInputEmpty) {
  EXPECT_EQ(Run({}, 1), InferStatus::kInferFailedInputEmpty);
}

TEST_P(TwoOperandLayers, ANullOrEmptyItemIsInputEmpty) {
  EXPECT_EQ(Run({a_, nullptr}, 1), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(Run({a_, std::make_shared<ftensor>()}, 1), InferStatus::kInferFailedInputEmpty);
}

TEST_P(TwoOperandLayers, NoOutputSlotsIsOutputEmpty) {
  EXPECT_EQ(Run({a_, b_}, 0), InferStatus::kInferFailedOutputEmpty);
}

TEST_P(TwoOperandLayers, AnOddNumberOfItemsIsABatchMismatch) {
  EXPECT_EQ(Run({a_, b_, a_}, 1), InferStatus::kInferFailedBatchMatchError);
}

TEST_P(TwoOperandLayers, OutputSlotsForAnotherBatchAreASizeMismatch) {
  EXPECT_EQ(Run({a_, b_}, 2), InferStatus::kInferFailedInputOutSizeMatchError);
  EXPECT_EQ(Run({a_, a_, b_, b_}, 1), InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST_P(TwoOperandLayers, CreationNeedsExactlyTwoOperands) {
  ExpectCreationError(OperatorWithInputs(GetParam(), 3).op(), "needs 2 inputs");
  ExpectCreationError(OperatorWithInputs(GetParam(), 1).op(), "has 1");
}

INSTANTIATE_TEST_SUITE_P(MatmulAndLinear, TwoOperandLayers,
                         ::testing::Values("torch.matmul", "F.linear"), [](const auto& info) {
                           return info.param == "F.linear" ? "FLinear" : "Matmul";
                         });

}  // namespace
}  // namespace kuiper::test
