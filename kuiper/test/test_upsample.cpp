// nn.Upsample / F.interpolate against PyTorch's F.interpolate
// (kuiper/test/data/layers/make_light_layers.py), and the coordinate mappings.
#include <gtest/gtest.h>

#include "kuiper/layer.hpp"
#include "kuiper/layers/resize.hpp"
#include "kuiper/npy.hpp"

namespace kuiper {
namespace {

const std::string kUpsampleData =
    std::string(KUIPER_SOURCE_DIR) + "/kuiper/test/data/layers/light/";

RuntimeOperator UpsampleOp(const std::string& mode, RuntimeParameter align_corners,
                           RuntimeParameter scale_factor, RuntimeParameter size) {
  RuntimeOperator op;
  op.type = "nn.Upsample";
  op.name = "up";
  op.params["mode"] = mode;
  op.params["align_corners"] = std::move(align_corners);
  op.params["scale_factor"] = std::move(scale_factor);
  op.params["size"] = std::move(size);
  return op;
}

void ExpectUpsampleMatchesTorch(const RuntimeOperator& op, const std::string& name) {
  const std::vector<sftensor> inputs = NpyToBatch(LoadNpy(kUpsampleData + "upsample_input.npy"));
  const std::vector<sftensor> expected =
      NpyToBatch(LoadNpy(kUpsampleData + "upsample_" + name + ".npy"));
  std::vector<sftensor> outputs(inputs.size());
  ASSERT_EQ(LayerRegisterer::CreateLayer(op)->Forward(inputs, outputs), InferStatus::kInferSuccess);
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(outputs[i]->raw_shapes(), expected[i]->raw_shapes()) << name;
    EXPECT_TRUE(TensorIsSame(outputs[i], expected[i], 1e-4f)) << name << " item " << i;
  }
}

const RuntimeParameter kNone = std::monostate{};

TEST(Upsample, NearestScale2MatchesTorch) {
  ExpectUpsampleMatchesTorch(UpsampleOp("nearest", false, std::vector<float>{2, 2}, kNone),
                             "nearest_scale2");
}

TEST(Upsample, NearestFractionalScaleMatchesTorch) {
  ExpectUpsampleMatchesTorch(UpsampleOp("nearest", kNone, std::vector<float>{1.5f, 2.5f}, kNone),
                             "nearest_scale_1_5x2_5");
}

TEST(Upsample, NearestSizeMatchesTorch) {
  ExpectUpsampleMatchesTorch(UpsampleOp("nearest", kNone, kNone, std::vector<int>{8, 3}),
                             "nearest_size_8x3");
}

TEST(Upsample, BilinearHalfPixelMatchesTorch) {
  ExpectUpsampleMatchesTorch(UpsampleOp("bilinear", false, 2.f, kNone), "bilinear_scale2");
}

TEST(Upsample, BilinearAlignCornersMatchesTorch) {
  ExpectUpsampleMatchesTorch(UpsampleOp("bilinear", true, std::vector<float>{2, 2}, kNone),
                             "bilinear_scale2_corners");
}

TEST(Upsample, BilinearSizeMatchesTorch) {
  ExpectUpsampleMatchesTorch(UpsampleOp("bilinear", false, kNone, std::vector<int>{9, 4}),
                             "bilinear_size_9x4");
  ExpectUpsampleMatchesTorch(UpsampleOp("bilinear", true, kNone, std::vector<int>{9, 4}),
                             "bilinear_size_9x4_corners");
}

TEST(Upsample, InterpolateIsRegistered) {
  RuntimeOperator op = UpsampleOp("nearest", kNone, 2.f, kNone);
  op.type = "F.interpolate";
  ExpectUpsampleMatchesTorch(op, "nearest_scale2");
}

TEST(Upsample, NonImageInputIsAShapeError) {
  auto layer = LayerRegisterer::CreateLayer(UpsampleOp("nearest", kNone, 2.f, kNone));
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(layer->Forward({TensorCreate({2, 3})}, outputs), InferStatus::kInferFailedShapeError);
}

TEST(Upsample, ScaleGivingAnEmptyImageIsAShapeError) {
  auto layer = LayerRegisterer::CreateLayer(UpsampleOp("nearest", kNone, 0.25f, kNone));
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(layer->Forward({TensorCreate(1, 3, 3)}, outputs), InferStatus::kInferFailedShapeError);
}

TEST(Upsample, InputChecksAreReported) {
  auto layer = LayerRegisterer::CreateLayer(UpsampleOp("nearest", kNone, 2.f, kNone));
  std::vector<sftensor> outputs(1), none;
  EXPECT_EQ(layer->Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({nullptr}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({TensorCreate(1, 2, 2)}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({TensorCreate(1, 2, 2), TensorCreate(1, 2, 2)}, outputs),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(Upsample, ParametersItCannotHonourAreRejectedAtCreation) {
  EXPECT_THROW(LayerRegisterer::CreateLayer(UpsampleOp("bicubic", false, 2.f, kNone)), LayerError);
  EXPECT_THROW(LayerRegisterer::CreateLayer(UpsampleOp("nearest", true, 2.f, kNone)), LayerError);
  EXPECT_THROW(LayerRegisterer::CreateLayer(UpsampleOp("nearest", kNone, kNone, kNone)),
               LayerError);
  EXPECT_THROW(
      LayerRegisterer::CreateLayer(UpsampleOp("nearest", kNone, 2.f, std::vector<int>{4, 4})),
      LayerError);
  EXPECT_THROW(LayerRegisterer::CreateLayer(UpsampleOp("nearest", kNone, -2.f, kNone)), LayerError);
  EXPECT_THROW(LayerRegisterer::CreateLayer(
                   UpsampleOp("nearest", kNone, std::vector<float>{2, 2, 2}, kNone)),
               LayerError);
}

TEST(ResizeCoordinates, EachModeMapsAsDocumented) {
  // 4 -> 8 pixels: scale 0.5 input pixels per output pixel.
  EXPECT_FLOAT_EQ(SourceCoordinate(CoordinateMode::kAsymmetric, 3, 0.5f, 4, 8), 1.5f);
  EXPECT_FLOAT_EQ(SourceCoordinate(CoordinateMode::kHalfPixel, 3, 0.5f, 4, 8), 1.25f);
  EXPECT_FLOAT_EQ(SourceCoordinate(CoordinateMode::kAlignCorners, 7, 0.5f, 4, 8), 3.f);
  EXPECT_FLOAT_EQ(SourceCoordinate(CoordinateMode::kAlignCorners, 0, 0.5f, 4, 1), 0.f);
}

TEST(ResizeCoordinates, AsymmetricBilinearInterpolatesFromTheLeftEdge) {
  // ONNX's asymmetric mapping, which no PyTorch layer uses: output x samples
  // input x / 2, so output 1 is halfway between inputs 0 and 1.
  ftensor input(1, 1, 3);
  input.Fill({0, 10, 20});
  ftensor output(1, 1, 6);
  Resize(input, output, ResizeMode::kBilinear, CoordinateMode::kAsymmetric, 1.f, 0.5f);
  EXPECT_EQ(output.values(), std::vector<float>({0, 5, 10, 15, 20, 20}));
}

}  // namespace
}  // namespace kuiper
