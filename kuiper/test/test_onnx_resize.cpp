// kuiper.Resize (ONNX's Resize and Upsample as the importer emits them): each
// coordinate mapping and nearest rounding on cases computed by hand, the
// statuses, and the parameters refused at creation.
#include <gtest/gtest.h>

#include "operand_test_util.hpp"

namespace kuiper::test {
namespace {

struct ResizeParams {
  std::string mode = "nearest";
  std::string coordinates = "asymmetric";
  std::string nearest = "floor";
  std::vector<int> size;
  RuntimeParameter scale;
};

OperatorWithInputs ResizeOperator(const ResizeParams& p) {
  OperatorWithInputs op("kuiper.Resize", 1);
  op.op().params["mode"] = p.mode;
  op.op().params["coordinate_mode"] = p.coordinates;
  op.op().params["nearest_mode"] = p.nearest;
  op.op().params["size"] = p.size;
  op.op().params["scale"] = p.scale;
  return op;
}

// Resizes the row (10, 20, 30, 40) to `width` pixels (scale_w output pixels
// per input pixel) and returns the resized row.
std::vector<float> ResizeRow(const std::string& mode, const std::string& coordinates,
                             const std::string& nearest, int width, float scale_w) {
  const ResizeParams p{mode, coordinates, nearest, {1, width}, std::vector<float>{1.f, scale_w}};
  std::vector<sftensor> outputs(1);
  const InferStatus status =
      ResizeOperator(p).Create()->Forward({RowMajorTensor({1, 1, 4}, {10, 20, 30, 40})}, outputs);
  EXPECT_EQ(status, InferStatus::kInferSuccess);
  return status == InferStatus::kInferSuccess ? outputs[0]->values() : std::vector<float>{};
}

using Row = std::vector<float>;

TEST(OnnxResize, NearestAsymmetricFloorRepeatsPixels) {
  // x_in = x / 2 = 0, 0.5, 1, ..., 3.5, floored.
  EXPECT_EQ(ResizeRow("nearest", "asymmetric", "floor", 8, 2.f),
            (Row{10, 10, 20, 20, 30, 30, 40, 40}));
}

TEST(OnnxResize, NearestAsymmetricCeilRoundsUpAndClampsAtTheEdge) {
  // ceil(0, 0.5, ..., 3.5) = 0, 1, 1, 2, 2, 3, 3, 4 -> the last index clamps to 3.
  EXPECT_EQ(ResizeRow("nearest", "asymmetric", "ceil", 8, 2.f),
            (Row{10, 20, 20, 30, 30, 40, 40, 40}));
}

TEST(OnnxResize, NearestAsymmetricDownsamplingTakesEveryOtherPixel) {
  EXPECT_EQ(ResizeRow("nearest", "asymmetric", "floor", 2, 0.5f), (Row{10, 30}));
}

TEST(OnnxResize, NearestHalfPixelTiesFollowTheRoundingMode) {
  // x_in = (x + 0.5) * 2 - 0.5 = 0.5, 2.5: exact ties.
  EXPECT_EQ(ResizeRow("nearest", "half_pixel", "round_prefer_floor", 2, 0.5f), (Row{10, 30}));
  EXPECT_EQ(ResizeRow("nearest", "half_pixel", "round_prefer_ceil", 2, 0.5f), (Row{20, 40}));
}

TEST(OnnxResize, NearestHalfPixelRoundsToTheClosestPixel) {
  // x_in = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, ..., 3.25.
  EXPECT_EQ(ResizeRow("nearest", "half_pixel", "round_prefer_floor", 8, 2.f),
            (Row{10, 10, 20, 20, 30, 30, 40, 40}));
}

TEST(OnnxResize, NearestAlignCornersMapsCornersToCorners) {
  // 4 -> 7 pixels: x_in = x * 3 / 6 = 0, 0.5, 1, ..., 3.
  EXPECT_EQ(ResizeRow("nearest", "align_corners", "round_prefer_floor", 7, 1.75f),
            (Row{10, 10, 20, 20, 30, 30, 40}));
  EXPECT_EQ(ResizeRow("nearest", "align_corners", "round_prefer_ceil", 7, 1.75f),
            (Row{10, 20, 20, 30, 30, 40, 40}));
}

TEST(OnnxResize, BilinearAsymmetricBlendsFromTheLeftEdge) {
  // x_in = x / 2; past the last pixel the last one repeats.
  EXPECT_EQ(ResizeRow("bilinear", "asymmetric", "floor", 8, 2.f),
            (Row{10, 15, 20, 25, 30, 35, 40, 40}));
}

TEST(OnnxResize, BilinearHalfPixelIsPyTorchsAlignCornersFalse) {
  // x_in = (x + 0.5) / 2 - 0.5, clamped into [0, 3].
  EXPECT_EQ(ResizeRow("bilinear", "half_pixel", "floor", 8, 2.f),
            (Row{10, 12.5f, 17.5f, 22.5f, 27.5f, 32.5f, 37.5f, 40}));
}

TEST(OnnxResize, BilinearAlignCornersSpreadsTheCornersApart) {
  EXPECT_EQ(ResizeRow("bilinear", "align_corners", "floor", 7, 1.75f),
            (Row{10, 15, 20, 25, 30, 35, 40}));
}

TEST(OnnxResize, PytorchHalfPixelSamplesPixelZeroForAOnePixelOutput) {
  // half_pixel maps the one output pixel to (0 + 0.5) * 4 - 0.5 = 1.5.
  EXPECT_EQ(ResizeRow("bilinear", "half_pixel", "floor", 1, 0.25f), (Row{25}));
  EXPECT_EQ(ResizeRow("bilinear", "pytorch_half_pixel", "floor", 1, 0.25f), (Row{10}));
  // With more than one output pixel it is half_pixel.
  EXPECT_EQ(ResizeRow("bilinear", "pytorch_half_pixel", "floor", 8, 2.f),
            ResizeRow("bilinear", "half_pixel", "floor", 8, 2.f));
}

TEST(OnnxResize, BilinearResizesRowsAndColumnsOfEveryChannel) {
  // F.interpolate([[1, 2], [3, 4]], size=4, mode="bilinear"), and twice that
  // in a second channel.
  ResizeParams p{"bilinear", "half_pixel", "floor", {4, 4}, std::vector<float>{2.f, 2.f}};
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(ResizeOperator(p).Create()->Forward(
                {RowMajorTensor({2, 2, 2}, {1, 2, 3, 4, 2, 4, 6, 8})}, outputs),
            InferStatus::kInferSuccess);
  const Row one = {1.0f, 1.25f, 1.75f, 2.0f, 1.5f, 1.75f, 2.25f, 2.5f,
                   2.5f, 2.75f, 3.25f, 3.5f, 3.0f, 3.25f, 3.75f, 4.0f};
  Row expected = one;
  for (float v : one) expected.push_back(2 * v);
  EXPECT_EQ(outputs[0]->raw_shapes(), (std::vector<uint32_t>{2, 4, 4}));
  EXPECT_EQ(outputs[0]->values(), expected);
}

TEST(OnnxResize, IntegerScalesAreAccepted) {
  ResizeParams p{"nearest", "asymmetric", "floor", {2, 2}, std::vector<int>{2, 2}};
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(ResizeOperator(p).Create()->Forward({RowMajorTensor({1, 1, 1}, {5})}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), (Row{5, 5, 5, 5}));
}

TEST(OnnxResize, AnItemThatIsNotAnImageIsAShapeError) {
  ResizeParams p{"nearest", "asymmetric", "floor", {2, 2}, std::vector<float>{2.f, 2.f}};
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(ResizeOperator(p).Create()->Forward({RowMajorTensor({1, 1}, {5})}, outputs),
            InferStatus::kInferFailedShapeError);
}

TEST(OnnxResize, InputChecksAreReported) {
  ResizeParams p{"nearest", "asymmetric", "floor", {2, 2}, std::vector<float>{2.f, 2.f}};
  const auto layer = ResizeOperator(p).Create();
  const sftensor image = RowMajorTensor({1, 1, 1}, {5});
  std::vector<sftensor> one(1), none;
  EXPECT_EQ(layer->Forward({}, one), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({nullptr}, one), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({image}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({image, image}, one), InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(OnnxResize, CreationRejectsUnknownModes) {
  const std::vector<float> scale = {2.f, 2.f};
  ExpectCreationError(ResizeOperator({"cubic", "asymmetric", "floor", {2, 2}, scale}).op(),
                      "mode=cubic is not supported");
  ExpectCreationError(
      ResizeOperator({"nearest", "tf_crop_and_resize", "floor", {2, 2}, scale}).op(),
      "coordinate_mode=tf_crop_and_resize is not supported");
  ExpectCreationError(ResizeOperator({"nearest", "asymmetric", "round", {2, 2}, scale}).op(),
                      "nearest_mode=round is not supported");
}

TEST(OnnxResize, CreationRejectsSizesAndScalesThatAreNotPositivePairs) {
  const std::vector<float> scale = {2.f, 2.f};
  const std::string why = "size (h,w) must be positive integers";
  ExpectCreationError(ResizeOperator({"nearest", "asymmetric", "floor", {2}, scale}).op(), why);
  ExpectCreationError(ResizeOperator({"nearest", "asymmetric", "floor", {0, 2}, scale}).op(), why);
  ExpectCreationError(
      ResizeOperator({"nearest", "asymmetric", "floor", {2, 2}, std::vector<float>{2.f, 0.f}}).op(),
      why);
  ExpectCreationError(
      ResizeOperator({"nearest", "asymmetric", "floor", {2, 2}, std::monostate{}}).op(), why);
}

}  // namespace
}  // namespace kuiper::test
