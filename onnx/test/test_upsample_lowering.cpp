// The Upsample (and Resize) lowering onto kuiper.Resize, branch by branch,
// with results checked against a direct computation written here.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

// ONNX's Upsample: x_in = x_out / scale (asymmetric), nearest floors, linear
// blends the two neighbours (the last pixel repeats past the edge).
std::vector<float> NaiveUpsample(const std::vector<float>& x, int64_t c, int64_t h, int64_t w,
                                 float sh, float sw, bool linear) {
  const int64_t oh = static_cast<int64_t>(std::floor(h * sh));
  const int64_t ow = static_cast<int64_t>(std::floor(w * sw));
  std::vector<float> y;
  for (int64_t ch = 0; ch < c; ++ch) {
    const auto at = [&](int64_t i, int64_t j) {
      return x[(ch * h + std::min(i, h - 1)) * w + std::min(j, w - 1)];
    };
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        const float si = i / sh, sj = j / sw;
        const int64_t i0 = static_cast<int64_t>(std::floor(si));
        const int64_t j0 = static_cast<int64_t>(std::floor(sj));
        if (!linear) {
          y.push_back(at(i0, j0));
          continue;
        }
        const float fi = si - i0, fj = sj - j0;
        y.push_back((1 - fi) * ((1 - fj) * at(i0, j0) + fj * at(i0, j0 + 1)) +
                    fi * ((1 - fj) * at(i0 + 1, j0) + fj * at(i0 + 1, j0 + 1)));
      }
    }
  }
  return y;
}

void SetString(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(value);
}

OneNodeModel Upsample(const std::string& mode, const std::vector<float>& scales,
                      const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
  OneNodeModel m("Upsample", 9);
  m.Input("X", x).Constant(FloatTensor("scales", {static_cast<int64_t>(scales.size())}, scales));
  m.Output("Y", y);
  SetString(m.node, "mode", mode);
  return m;
}

// Resize-13 of X (1,1,2,2) by the scales (1,1,2,2), with no roi.
OneNodeModel Resize(const std::string& mode, const std::string& coordinate_mode) {
  OneNodeModel m("Resize", 13);
  m.Input("X", {1, 1, 2, 2});
  m.node->add_input("");  // no roi
  m.Constant(FloatTensor("scales", {4}, {1, 1, 2, 2})).Output("Y", {1, 1, 4, 4});
  SetString(m.node, "mode", mode);
  SetString(m.node, "coordinate_transformation_mode", coordinate_mode);
  return m;
}

using Types = std::vector<std::string>;

TEST(UpsampleLowering, NearestIsResizeNearestAsymmetric) {
  OneNodeModel m = Upsample("nearest", {1, 1, 2, 3}, {1, 2, 3, 2}, {1, 2, 6, 6});
  const pnnx::Graph g = ConvertOnnx(m.model);
  ASSERT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "kuiper.Resize", "pnnx.Output"}));
  const pnnx::Operator& op = g.operators[1];
  EXPECT_EQ(op.params.at("mode").s, "nearest");
  EXPECT_EQ(op.params.at("coordinate_mode").s, "asymmetric");
  EXPECT_EQ(op.params.at("size").ai, (std::vector<int>{6, 6}));
  const std::vector<float> x = Iota(12);
  EXPECT_LE(MaxAbsDiff(RunGraph(g, {x}), NaiveUpsample(x, 2, 3, 2, 2, 3, false)), 1e-6f);
}

TEST(UpsampleLowering, LinearIsResizeBilinearAsymmetric) {
  OneNodeModel m = Upsample("linear", {1, 1, 2, 2.5f}, {2, 1, 3, 2}, {2, 1, 6, 5});
  const pnnx::Graph g = ConvertOnnx(m.model);
  ASSERT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "kuiper.Resize", "pnnx.Output"}));
  const pnnx::Operator& op = g.operators[1];
  EXPECT_EQ(op.params.at("mode").s, "bilinear");
  EXPECT_EQ(op.params.at("coordinate_mode").s, "asymmetric");
  EXPECT_EQ(op.params.at("size").ai, (std::vector<int>{6, 5}));
  EXPECT_EQ(op.params.at("scale").af, (std::vector<float>{2, 2.5f}));
  const std::vector<float> x = Iota(12);
  EXPECT_LE(MaxAbsDiff(RunGraph(g, {x}), NaiveUpsample(x, 2, 3, 2, 2, 2.5f, true)), 1e-5f);
}

TEST(UpsampleLowering, Upsample7TakesScalesFromItsAttribute) {
  OneNodeModel m("Upsample", 7);
  m.Input("X", {1, 1, 2, 2}).Output("Y", {1, 1, 4, 6});
  auto* attr = m.node->add_attribute();
  attr->set_name("scales");
  attr->set_type(onnx::AttributeProto::FLOATS);
  for (float s : {1.f, 1.f, 2.f, 3.f}) attr->add_floats(s);
  const pnnx::Graph g = ConvertOnnx(m.model);
  ASSERT_EQ(OperatorTypes(g), (Types{"pnnx.Input", "kuiper.Resize", "pnnx.Output"}));
  const pnnx::Operator& op = g.operators[1];
  EXPECT_EQ(op.params.at("mode").s, "nearest");  // ONNX's default mode
  EXPECT_EQ(op.params.at("coordinate_mode").s, "asymmetric");
  EXPECT_EQ(op.params.at("size").ai, (std::vector<int>{4, 6}));
  EXPECT_EQ(op.params.at("scale").af, (std::vector<float>{2, 3}));
  const std::vector<float> x = {1, 2, 3, 4};
  EXPECT_LE(MaxAbsDiff(RunGraph(g, {x}), NaiveUpsample(x, 1, 2, 2, 2, 3, false)), 1e-6f);
}

TEST(UpsampleLowering, ThreeInputsStopTheConversion) {
  OneNodeModel m = Upsample("nearest", {1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 4, 4});
  m.Constant(FloatTensor("extra", {1}, {0.f}));
  ExpectErrorNamingNode(m.model, "needs 2 input(s)");
}

TEST(UpsampleLowering, NoScalesInputAndNoScalesAttributeStopsTheConversion) {
  OneNodeModel m("Upsample", 9);
  m.Input("X", {1, 1, 2, 2}).Output("Y", {1, 1, 4, 4});
  ExpectErrorNamingNode(m.model, "Upsample needs 2 input(s) (X, scales), has 1");
}

TEST(UpsampleLowering, FiveDimensionalInputStopsTheConversion) {
  OneNodeModel m = Upsample("nearest", {1, 1, 2, 2, 2}, {1, 1, 2, 2, 2}, {1, 1, 4, 4, 4});
  ExpectErrorNamingNode(m.model, "5-D");
}

TEST(UpsampleLowering, AnOutputShapeThatDisagreesStopsTheConversion) {
  OneNodeModel m = Upsample("nearest", {1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 4, 5});
  ExpectErrorNamingNode(m.model, "differs from the node's output shape");
}

TEST(UpsampleLowering, UnknownModeStopsTheConversion) {
  OneNodeModel m = Upsample("cubic", {1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 4, 4});
  ExpectErrorNamingNode(m.model, "mode=cubic");
}

// Found by fuzz/onnx_fuzzer.cpp: floor(2 * 1e30) fits no integer, and the cast was undefined.
TEST(UpsampleLowering, AScaleGivingASizeBeyondIntStopsTheConversion) {
  OneNodeModel m = Upsample("nearest", {1, 1, 1e30f, 2}, {1, 1, 2, 2}, {1, 1, 4, 4});
  ExpectErrorNamingNode(m.model, "give a size beyond 2147483647");
}

// Cubic mode is converted (test_load_time_constants.cpp, OnnxResizeCubic);
// a mode ONNX does not define stops the conversion.
TEST(ResizeLowering, UnknownModeStopsTheConversion) {
  ExpectErrorNamingNode(Resize("area", "asymmetric").model, "mode=area is not supported");
}

TEST(ResizeLowering, TfCropAndResizeStopsTheConversion) {
  ExpectErrorNamingNode(Resize("linear", "tf_crop_and_resize").model,
                        "coordinate_transformation_mode=tf_crop_and_resize is not supported");
}

// tf_half_pixel_for_nn maps output x to (x + 0.5) * in/out, without
// half_pixel's -0.5: 4 -> 3 pixels samples 0.67, 2.0, 3.33, which
// round_prefer_floor (the default) makes 1, 2, 3 (half_pixel: 0, 1, 3).
TEST(ResizeLowering, TfHalfPixelForNnSamplesWithoutTheHalfPixelShift) {
  OneNodeModel m("Resize", 13);
  m.Input("X", {1, 1, 1, 4});
  m.node->add_input("");  // no roi
  m.node->add_input("");  // no scales
  m.Constant(Ints("sizes", {1, 1, 1, 3})).Output("Y", {1, 1, 1, 3});
  SetString(m.node, "mode", "nearest");
  SetString(m.node, "coordinate_transformation_mode", "tf_half_pixel_for_nn");
  EXPECT_EQ(RunGraph(ConvertOnnx(m.model), {{1, 2, 3, 4}}), (std::vector<float>{2, 3, 4}));
}

TEST(ResizeLowering, AnAxesAttributeStopsTheConversion) {
  OneNodeModel m = Resize("nearest", "asymmetric");
  auto* attr = m.node->add_attribute();
  attr->set_name("axes");
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t axis : {2, 3}) attr->add_ints(axis);
  ExpectErrorNamingNode(m.model, "the axes and antialias attributes are not supported");
}

TEST(ResizeLowering, AnAntialiasAttributeStopsTheConversion) {
  OneNodeModel m = Resize("linear", "half_pixel");
  auto* attr = m.node->add_attribute();
  attr->set_name("antialias");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(1);
  ExpectErrorNamingNode(m.model, "the axes and antialias attributes are not supported");
}

TEST(ResizeLowering, NeitherScalesNorSizesStopsTheConversion) {
  OneNodeModel m("Resize", 13);
  m.Input("X", {1, 1, 2, 2});
  m.node->add_input("");  // no roi
  m.node->add_input("");  // no scales, and no sizes after it
  m.Output("Y", {1, 1, 4, 4});
  ExpectErrorNamingNode(m.model, "has neither scales nor sizes");
}

TEST(ResizeLowering, SizesWithHalfPixelLinearMatchesPyTorchBilinear) {
  OneNodeModel m("Resize", 13);
  m.Input("X", {1, 1, 2, 2});
  m.node->add_input("");  // no roi
  m.node->add_input("");  // no scales
  onnx::TensorProto sizes;
  sizes.set_name("sizes");
  sizes.set_data_type(onnx::TensorProto::INT64);
  sizes.add_dims(4);
  for (int64_t s : {1, 1, 4, 4}) sizes.add_int64_data(s);
  m.Constant(sizes).Output("Y", {1, 1, 4, 4});
  SetString(m.node, "mode", "linear");
  const pnnx::Graph g = ConvertOnnx(m.model);
  EXPECT_EQ(g.operators[1].params.at("coordinate_mode").s, "half_pixel");
  // torch.nn.functional.interpolate([[1,2],[3,4]], size=4, mode="bilinear")
  const std::vector<float> expected = {1.0f, 1.25f, 1.75f, 2.0f, 1.5f, 1.75f, 2.25f, 2.5f,
                                       2.5f, 2.75f, 3.25f, 3.5f, 3.0f, 3.25f, 3.75f, 4.0f};
  EXPECT_LE(MaxAbsDiff(RunGraph(g, {{1, 2, 3, 4}}), expected), 1e-6f);
}

}  // namespace
}  // namespace kuiper::testing
