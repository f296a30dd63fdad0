// nn.MaxPool2d and F.max_pool2d against PyTorch
// (kuiper/test/data/layers/make_conv_pool.py). Padding goes through lab
// course2's Tensor::Padding.
#include <gtest/gtest.h>

#include <limits>

#include "../conv_pool_test_util.hpp"
#include "kuiper/error.hpp"

namespace kuiper {
namespace {

using test::Batch;
using test::Expected;
using test::MakeOperator;
using test::MaxAbsDiff;
using test::RunOnCase;

RuntimeOperator MaxPool(std::vector<int> kernel, std::vector<int> stride, std::vector<int> padding,
                        std::vector<int> dilation, bool ceil_mode,
                        const std::string& type = "nn.MaxPool2d") {
  return MakeOperator(type, {{"kernel_size", kernel},
                             {"stride", stride},
                             {"padding", padding},
                             {"dilation", dilation},
                             {"ceil_mode", ceil_mode},
                             {"return_indices", false}});
}

void ExpectMatchesPyTorch(const RuntimeOperator& op, const std::string& case_name) {
  InferStatus status;
  const auto outputs = RunOnCase(op, case_name, &status);
  ASSERT_EQ(status, InferStatus::kInferSuccess);
  EXPECT_LE(MaxAbsDiff(outputs, Expected(case_name)), 0.f);  // a maximum is exact
}

TEST(MaxPool, CeilModeWindowsOverTheEdgeMatchPyTorch) {
  ExpectMatchesPyTorch(MaxPool({3, 3}, {2, 2}, {1, 1}, {1, 1}, true), "maxpool_ceil");
}

TEST(MaxPool, CeilModeDropsWindowStartingInPaddingLikePyTorch) {
  ExpectMatchesPyTorch(MaxPool({2, 2}, {2, 2}, {1, 1}, {1, 1}, true), "maxpool_ceil_drop");
}

TEST(MaxPool, DilatedRectangularMatchesPyTorch) {
  ExpectMatchesPyTorch(MaxPool({3, 2}, {2, 1}, {1, 0}, {2, 1}, false), "maxpool_dilated");
}

// Windows one row (column) high: a pass of one tap; strides 3 take the
// general path.
TEST(MaxPool, OneRowWindowsMatchPyTorch) {
  ExpectMatchesPyTorch(MaxPool({1, 3}, {3, 2}, {0, 1}, {1, 1}, false), "maxpool_one_row");
}

TEST(MaxPool, OneColumnWindowsMatchPyTorch) {
  ExpectMatchesPyTorch(MaxPool({3, 1}, {2, 3}, {1, 0}, {1, 1}, false), "maxpool_one_column");
}

// 2, 3 and 5 taps per pass have forms the compiler unrolls; 4 takes the
// general one. YOLOv5s's SPPF pools 5x5 with stride 1.
TEST(MaxPool, FiveByFiveStrideOneMatchesPyTorch) {
  ExpectMatchesPyTorch(MaxPool({5, 5}, {1, 1}, {2, 2}, {1, 1}, false), "maxpool_sppf");
}

TEST(MaxPool, FourByFourWindowsMatchPyTorch) {
  ExpectMatchesPyTorch(MaxPool({4, 4}, {3, 3}, {2, 2}, {1, 1}, false), "maxpool_four");
}

TEST(MaxPool, FunctionalAliasMatchesPyTorch) {
  ExpectMatchesPyTorch(MaxPool({3, 3}, {2, 2}, {1, 1}, {1, 1}, true, "F.max_pool2d"),
                       "maxpool_ceil");
}

TEST(MaxPool, MissingStrideDefaultsToKernel) {
  RuntimeOperator op = MaxPool({2, 2}, {}, {0, 0}, {1, 1}, false);
  op.params["stride"] = std::monostate{};
  auto layer = LayerRegisterer::CreateLayer(op);
  std::vector<sftensor> inputs{TensorCreate(1, 2, 4)}, outputs(1);
  inputs[0]->Fill({1, 5, 3, 4, 2, 6, 8, 7});
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({6, 8}));
}

TEST(MaxPool, NegativeInputsIgnoreThePadding) {
  auto layer = LayerRegisterer::CreateLayer(MaxPool({3, 3}, {1, 1}, {1, 1}, {1, 1}, false));
  std::vector<sftensor> inputs{TensorCreate(1, 1, 1)}, outputs(1);
  inputs[0]->Fill(-7.f);
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({-7.f}));
}

TEST(MaxPool, InputIsNotModified) {
  auto layer = LayerRegisterer::CreateLayer(MaxPool({3, 3}, {2, 2}, {1, 1}, {1, 1}, true));
  std::vector<sftensor> inputs = Batch(1, 2, 5, 5), outputs(1);
  const sftensor before = TensorClone(inputs[0]);
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  EXPECT_TRUE(TensorIsSame(inputs[0], before, 0.f));
}

TEST(MaxPool, ReturnIndicesIsRejected) {
  RuntimeOperator op = MaxPool({2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
  op.params["return_indices"] = true;
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(MaxPool, PaddingOverHalfTheKernelIsRejected) {
  EXPECT_THROW(LayerRegisterer::CreateLayer(MaxPool({2, 2}, {2, 2}, {2, 2}, {1, 1}, false)),
               LayerError);
}

TEST(MaxPool, ZeroKernelIsRejected) {
  EXPECT_THROW(LayerRegisterer::CreateLayer(MaxPool({0, 2}, {2, 2}, {0, 0}, {1, 1}, false)),
               LayerError);
}

TEST(MaxPool, EmptyInputBatch) {
  auto layer = LayerRegisterer::CreateLayer(MaxPool({2, 2}, {2, 2}, {0, 0}, {1, 1}, false));
  std::vector<sftensor> inputs, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST(MaxPool, NullInputTensor) {
  auto layer = LayerRegisterer::CreateLayer(MaxPool({2, 2}, {2, 2}, {0, 0}, {1, 1}, false));
  std::vector<sftensor> inputs{nullptr}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST(MaxPool, NoOutputSlots) {
  auto layer = LayerRegisterer::CreateLayer(MaxPool({2, 2}, {2, 2}, {0, 0}, {1, 1}, false));
  std::vector<sftensor> inputs = Batch(1, 2, 4, 4), outputs;
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedOutputEmpty);
}

TEST(MaxPool, BatchSizesDiffer) {
  auto layer = LayerRegisterer::CreateLayer(MaxPool({2, 2}, {2, 2}, {0, 0}, {1, 1}, false));
  std::vector<sftensor> inputs = Batch(3, 2, 4, 4), outputs(2);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(MaxPool, InputSmallerThanKernelIsShapeError) {
  auto layer = LayerRegisterer::CreateLayer(MaxPool({3, 3}, {1, 1}, {0, 0}, {1, 1}, false));
  std::vector<sftensor> inputs = Batch(1, 2, 2, 5), outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedShapeError);
}

TEST(MaxPool, OneDimensionalInputIsShapeError) {
  auto layer = LayerRegisterer::CreateLayer(MaxPool({1, 1}, {1, 1}, {0, 0}, {1, 1}, false));
  std::vector<sftensor> inputs{TensorCreate({4})}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedShapeError);
}

}  // namespace
}  // namespace kuiper
