// nn.MaxPool2d and F.max_pool2d against PyTorch
// (kuiper/test/data/layers/make_conv_pool.py), and the windows that cross the
// border against a naive loop over each window's taps.
#include <gtest/gtest.h>

#include <algorithm>
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

// Windows clamped to the input, against the definition: the maximum over
// the taps of each window that lie inside the input, -infinity when none
// does. The inputs are all negative and distinct, so a border padded with 0
// or a tap read from the wrong place changes the result.
struct NaivePool {
  uint32_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil_mode;
};

sftensor NegativeInput(uint32_t c, uint32_t h, uint32_t w) {
  sftensor x = TensorCreate(c, h, w);
  for (uint32_t i = 0; i < x->size(); ++i) x->index(i) = -1.f - static_cast<float>(i * 37 % 101);
  return x;
}

void ExpectMatchesNaiveLoop(const NaivePool& p, const sftensor& x, uint32_t out_h, uint32_t out_w) {
  auto layer = LayerRegisterer::CreateLayer(MaxPool({int(p.kh), int(p.kw)}, {int(p.sh), int(p.sw)},
                                                    {int(p.ph), int(p.pw)}, {int(p.dh), int(p.dw)},
                                                    p.ceil_mode));
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({x}, outputs), InferStatus::kInferSuccess);
  ASSERT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({x->channels(), out_h, out_w}));
  for (uint32_t c = 0; c < x->channels(); ++c) {
    for (uint32_t oy = 0; oy < out_h; ++oy) {
      for (uint32_t ox = 0; ox < out_w; ++ox) {
        float best = -std::numeric_limits<float>::infinity();
        for (uint32_t ty = 0; ty < p.kh; ++ty) {
          for (uint32_t tx = 0; tx < p.kw; ++tx) {
            const int64_t iy = int64_t{oy} * p.sh - p.ph + int64_t{ty} * p.dh;
            const int64_t ix = int64_t{ox} * p.sw - p.pw + int64_t{tx} * p.dw;
            if (iy < 0 || iy >= x->rows() || ix < 0 || ix >= x->cols()) continue;
            best = std::max(best, x->at(c, iy, ix));
          }
        }
        EXPECT_EQ(outputs[0]->at(c, oy, ox), best)
            << "channel " << c << ", (" << oy << ", " << ox << ")";
      }
    }
  }
}

// 3x3, stride 1, padding 1: the windows of the first and last rows and
// columns hang one tap over each side, the corners over two.
TEST(MaxPool, WindowsOverEverySideMatchANaiveLoop) {
  ExpectMatchesNaiveLoop({3, 3, 1, 1, 1, 1, 1, 1, false}, NegativeInput(2, 7, 6), 7, 6);
}

// ResNet18's stem pool, 3x3 stride 2 padding 1, on an odd and an even size:
// (9 + 2 - 3) / 2 + 1 = 5 rows, (8 + 2 - 3) / 2 + 1 = 4 columns.
TEST(MaxPool, ResNetStemPoolMatchesANaiveLoop) {
  ExpectMatchesNaiveLoop({3, 3, 2, 2, 1, 1, 1, 1, false}, NegativeInput(3, 9, 8), 5, 4);
}

// YOLOv5s's SPPF pool, 5x5 stride 1 padding 2, on a map of 3 x 4: every
// window crosses the top and the bottom edge at once, most the left or right.
TEST(MaxPool, SppfPoolOnAMapSmallerThanItsWindowMatchesANaiveLoop) {
  ExpectMatchesNaiveLoop({5, 5, 1, 1, 2, 2, 1, 1, false}, NegativeInput(2, 3, 4), 3, 4);
  ExpectMatchesNaiveLoop({5, 5, 1, 1, 2, 2, 1, 1, false}, NegativeInput(1, 11, 12), 11, 12);
}

// ceil_mode: 3x3 stride 2, no padding, 8 x 6: ceil((8 - 3) / 2) + 1 = 4 rows,
// ceil((6 - 3) / 2) + 1 = 3 columns; the last window of each hangs one tap
// over the bottom or right edge.
TEST(MaxPool, CeilModeLastWindowsOverTheEdgeMatchANaiveLoop) {
  ExpectMatchesNaiveLoop({3, 3, 2, 2, 0, 0, 1, 1, true}, NegativeInput(2, 8, 6), 4, 3);
}

// Dilation 2 with padding 2: the window's taps are two apart, so a clamped
// window starts at its first tap inside the input, not at the edge.
TEST(MaxPool, DilatedWindowsOverTheBorderMatchANaiveLoop) {
  ExpectMatchesNaiveLoop({3, 2, 1, 2, 2, 1, 2, 2, false}, NegativeInput(2, 6, 5), 6, 3);
}

// Kernel 2, dilation 3, padding 2 on 2 x 2: the middle window's taps fall at
// -1 and 2, both outside, so its maximum is over nothing: -infinity, as in
// PyTorch; the windows at -2 and 0 each have one tap inside.
TEST(MaxPool, WindowWithNoTapInsideIsMinusInfinity) {
  ExpectMatchesNaiveLoop({2, 2, 1, 1, 2, 2, 3, 3, false}, NegativeInput(1, 2, 2), 3, 3);
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
