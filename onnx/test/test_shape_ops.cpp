// Reductions, axis and shape operators (onnx/src/lower_shape.cpp,
// lower_reduce.cpp, lower_gather.cpp): each ONNX form against values worked out by hand from
// row-major 0, 1, 2, ... or an independent naive loop, with negative axes, keepdims=0, axis 0 (then
// the graph runs as one batch item, docs/onnx.md §2) and a bad input each.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

std::vector<float> Run1(const onnx::ModelProto& model, const std::vector<float>& x) {
  return RunGraph(ConvertOnnx(model), {x});
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want,
                const std::string& why) {
  ASSERT_EQ(got.size(), want.size()) << why;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5f * std::max(1.f, std::abs(want[i])))
        << "element " << i << ": " << why;
  }
}

// ---- reductions ----

TEST(OnnxShapeOps, ReduceSumOverANegativeAxisWithoutKeepdims) {
  // (2,3,4) summed over axis -1 (opset 13: axes as input 1).
  OneNodeModel m("ReduceSum", 13);
  m.Input("X", {2, 3, 4}).Constant(Ints("axes", {-1})).Output("Y", {2, 3});
  SetInt(m.node, "keepdims", 0);
  // Row r holds 4r..4r+3: sum 16r + 6.
  ExpectNear(Run1(m.model, Range(24)), {6, 22, 38, 54, 70, 86}, "sum of each row of 4");
}

TEST(OnnxShapeOps, ReduceMaxOverAxisZeroRunsAsOneItem) {
  OneNodeModel m("ReduceMax", 13);
  m.Input("X", {3, 2}).Output("Y", {1, 2});
  SetInts(m.node, "axes", {0});
  std::vector<float> x = {1, -5, 7, 2, -3, 4};  // columns (1,7,-3) and (-5,2,4)
  ExpectNear(Run1(m.model, x), {7, 4}, "max of each column, keepdims=1");
}

TEST(OnnxShapeOps, ReduceMeanOfEveryAxisWhenAxesAreEmpty) {
  OneNodeModel m("ReduceMean", 13);
  m.Input("X", {2, 3}).Output("Y", {1, 1});
  ExpectNear(Run1(m.model, Range(6)), {2.5f}, "mean of 0..5");
}

TEST(OnnxShapeOps, ReduceMeanOverTheChannelsIsNoLongerRefused) {
  OneNodeModel m("ReduceMean", 11);
  m.Input("X", {1, 2, 2, 2}).Output("Y", {1, 1, 2, 2});
  SetInts(m.node, "axes", {1});
  // channel 0: 0..3, channel 1: 4..7 -> mean 2..5
  ExpectNear(Run1(m.model, Range(8)), {2, 3, 4, 5}, "mean over C");
}

TEST(OnnxShapeOps, ReduceSumWithNoopAndEmptyAxesIsTheIdentity) {
  OneNodeModel m("ReduceSum", 13);
  m.Input("X", {2, 3}).Output("Y", {2, 3});
  SetInt(m.node, "noop_with_empty_axes", 1);
  ExpectNear(Run1(m.model, Range(6)), Range(6), "noop_with_empty_axes=1");
}

TEST(OnnxShapeOps, ReduceL1L2SumSquareLogSumAndLogSumExpMatchNaiveLoops) {
  const std::vector<float> x = {0.5f, -1.5f, 2.f, 3.f, -0.25f, 1.f};  // (2,3)
  struct Case {
    const char* type;
    float (*row)(const float*);
  };
  const Case cases[] = {
      {"ReduceL1", [](const float* r) { return std::abs(r[0]) + std::abs(r[1]) + std::abs(r[2]); }},
      {"ReduceL2",
       [](const float* r) { return std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]); }},
      {"ReduceSumSquare", [](const float* r) { return r[0] * r[0] + r[1] * r[1] + r[2] * r[2]; }},
      {"ReduceLogSum", [](const float* r) { return std::log(r[0] + r[1] + r[2] + 10.f); }},
      {"ReduceLogSumExp",
       [](const float* r) { return std::log(std::exp(r[0]) + std::exp(r[1]) + std::exp(r[2])); }},
      {"ReduceProd", [](const float* r) { return r[0] * r[1] * r[2]; }},
      {"ReduceMin",
       [](const float* r) {
         return std::min({r[0], r[1], r[2]});
       }},
  };
  for (const Case& c : cases) {
    OneNodeModel m(c.type, 13);
    m.Input("X", {2, 3}).Output("Y", {2});
    SetInts(m.node, "axes", {1});
    SetInt(m.node, "keepdims", 0);
    std::vector<float> in = x;
    if (std::string(c.type) == "ReduceLogSum") {
      for (float& v : in) v += 10.f / 3;  // positive sums
    }
    const std::vector<float> want = {
        std::string(c.type) == "ReduceLogSum" ? std::log(x[0] + x[1] + x[2] + 10.f) : c.row(&x[0]),
        std::string(c.type) == "ReduceLogSum" ? std::log(x[3] + x[4] + x[5] + 10.f) : c.row(&x[3])};
    ExpectNear(Run1(m.model, in), want, c.type);
  }
}

TEST(OnnxShapeOps, ReduceWithAnAxisOutOfRangeNamesTheNode) {
  OneNodeModel m("ReduceSum", 11);
  m.Input("X", {2, 3}).Output("Y", {2, 3});
  SetInts(m.node, "axes", {2});
  ExpectErrorNamingNode(m.model, "axis 2 is out of range for rank 2");
}

TEST(OnnxShapeOps, GlobalMaxPoolTakesTheMaximumOfEveryChannel) {
  OneNodeModel m("GlobalMaxPool", 11);
  m.Input("X", {1, 2, 2, 2}).Output("Y", {1, 2, 1, 1});
  ExpectNear(Run1(m.model, {1, 9, -2, 3, -7, -1, -4, -8}), {9, -1}, "max of each channel");
}

// ---- arg max / min ----

TEST(OnnxShapeOps, ArgMaxSelectLastIndexTakesTheLastOfEqualMaxima) {
  for (int last : {0, 1}) {
    OneNodeModel m("ArgMax", 12);
    m.Input("X", {2, 3}).Output("Y", {2, 1});
    SetInt(m.node, "axis", -1);
    SetInt(m.node, "select_last_index", last);
    ExpectNear(Run1(m.model, {5, 1, 5, 0, 2, 2}),
               last ? std::vector<float>{2, 2} : std::vector<float>{0, 1}, "ties");
  }
}

TEST(OnnxShapeOps, ArgMinAlongAxisZeroWithoutKeepdims) {
  OneNodeModel m("ArgMin", 13);
  m.Input("X", {3, 2}).Output("Y", {2});
  SetInt(m.node, "keepdims", 0);
  ExpectNear(Run1(m.model, {4, 0, 1, 5, 3, -1}), {1, 2}, "row of the minimum per column");
}

// ---- softmax family ----

TEST(OnnxShapeOps, LogSoftmaxAlongAMiddleAxis) {
  OneNodeModel m("LogSoftmax", 13);
  m.Input("X", {1, 2, 2}).Output("Y", {1, 2, 2});
  SetInt(m.node, "axis", 1);
  // columns (0,2) and (1,3): log softmax of (a, a+2) is (-log(1+e^2), 2-log(1+e^2))
  const float l = std::log(1.f + std::exp(2.f));
  ExpectNear(Run1(m.model, Range(4)), {-l, -l, 2 - l, 2 - l}, "log softmax over axis 1");
}

TEST(OnnxShapeOps, Opset11SoftmaxCoercesTheInputToTwoDimensionsAtAxis) {
  // axis=1 of (1,2,2): one row of 4 values, not softmax over dimension 1 alone.
  OneNodeModel m("Softmax", 11);
  m.Input("X", {1, 2, 2}).Output("Y", {1, 2, 2});
  float sum = 0;
  for (int i = 0; i < 4; ++i) sum += std::exp(static_cast<float>(i));
  std::vector<float> want;
  for (int i = 0; i < 4; ++i) want.push_back(std::exp(static_cast<float>(i)) / sum);
  ExpectNear(Run1(m.model, Range(4)), want, "opset < 13: softmax over the flattened dims 1..");
}

TEST(OnnxShapeOps, Opset11LogSoftmaxAtAxisZeroRunsAsOneItem) {
  OneNodeModel m("LogSoftmax", 11);
  m.Input("X", {2, 2}).Output("Y", {2, 2});
  SetInt(m.node, "axis", 0);
  float sum = 0;
  for (int i = 0; i < 4; ++i) sum += std::exp(static_cast<float>(i));
  std::vector<float> want;
  for (int i = 0; i < 4; ++i) want.push_back(static_cast<float>(i) - std::log(sum));
  ExpectNear(Run1(m.model, Range(4)), want, "all four values are one row");
}

TEST(OnnxShapeOps, HardmaxMarksTheFirstMaximum) {
  OneNodeModel m("Hardmax", 13);
  m.Input("X", {2, 3}).Output("Y", {2, 3});
  ExpectNear(Run1(m.model, {1, 3, 3, -1, -2, -5}), {0, 1, 0, 1, 0, 0}, "first maximum per row");
}

// ---- along an axis ----

TEST(OnnxShapeOps, CumSumExclusiveAndReverse) {
  const std::vector<std::vector<float>> want = {
      {1, 3, 6}, {0, 1, 3}, {6, 5, 3}, {5, 3, 0}};  // (exclusive, reverse) = 00, 10, 01, 11
  for (int form = 0; form < 4; ++form) {
    OneNodeModel m("CumSum", 14);
    m.Input("X", {1, 3}).Constant(Ints("axis", {-1})).Output("Y", {1, 3});
    SetInt(m.node, "exclusive", form & 1);
    SetInt(m.node, "reverse", form >> 1);
    ExpectNear(Run1(m.model, {1, 2, 3}), want[form], "cumsum form " + std::to_string(form));
  }
}

TEST(OnnxShapeOps, TriluKeepsTheTriangleAboveDiagonalK) {
  for (int upper : {0, 1}) {
    OneNodeModel m("Trilu", 14);
    m.Input("X", {3, 3}).Constant(Ints("k", {1})).Output("Y", {3, 3});
    SetInt(m.node, "upper", upper);
    // triu(k=1): j - i >= 1; tril(k=1): j - i <= 1
    const std::vector<float> want = upper ? std::vector<float>{0, 1, 2, 0, 0, 5, 0, 0, 0}
                                          : std::vector<float>{0, 1, 0, 3, 4, 5, 6, 7, 8};
    ExpectNear(Run1(m.model, Range(9)), want, upper ? "triu" : "tril");
  }
}

TEST(OnnxShapeOps, GatherWithNegativeTwoDimensionalIndices) {
  OneNodeModel m("Gather", 13);
  onnx::TensorProto indices = Ints("idx", {-1, 0, 1, 1});
  indices.clear_dims();
  indices.add_dims(2);
  indices.add_dims(2);
  m.Input("X", {1, 3, 2}).Constant(indices).Output("Y", {1, 2, 2, 2});
  SetInt(m.node, "axis", 1);
  // rows (0,1), (2,3), (4,5); picked: row 2, row 0, row 1, row 1
  ExpectNear(Run1(m.model, Range(6)), {4, 5, 0, 1, 2, 3, 2, 3}, "rows -1, 0, 1, 1");
}

TEST(OnnxShapeOps, GatherWithAnAxisOutOfRangeNamesTheNode) {
  OneNodeModel m("Gather", 13);
  m.Input("X", {1, 3}).Constant(Ints("idx", {0})).Output("Y", {1, 1});
  SetInt(m.node, "axis", -3);
  ExpectErrorNamingNode(m.model, "axis -3 is out of range for rank 2");
}

// ---- copies ----

TEST(OnnxShapeOps, ExpandBroadcastsALowerRankInput) {
  OneNodeModel m("Expand", 13);
  m.Input("X", {3}).Constant(Ints("shape", {2, 3})).Output("Y", {2, 3});
  ExpectNear(Run1(m.model, {1, 2, 3}), {1, 2, 3, 1, 2, 3}, "(3) -> (2,3)");
}

TEST(OnnxShapeOps, TileRepeatsEveryDimension) {
  OneNodeModel m("Tile", 13);
  m.Input("X", {2, 2}).Constant(Ints("repeats", {2, 1})).Output("Y", {4, 2});
  ExpectNear(Run1(m.model, Range(4)), {0, 1, 2, 3, 0, 1, 2, 3}, "tiled twice down");
}

TEST(OnnxShapeOps, PadModesConstantReflectEdgeWrap) {
  // (1,3) padded by 2 before and 1 after the last axis.
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"constant", {9, 9, 1, 2, 3, 9}},
      {"reflect", {3, 2, 1, 2, 3, 2}},
      {"edge", {1, 1, 1, 2, 3, 3}},
      {"wrap", {2, 3, 1, 2, 3, 1}}};
  for (const auto& [mode, want] : cases) {
    OneNodeModel m("Pad", 13);  // wrap is opset 19, which ONNX 1.12 does not know
    m.Input("X", {1, 3})
        .Constant(Ints("pads", {0, 2, 0, 1}))
        .Constant(FloatTensor("value", {}, {9.f}))
        .Output("Y", {1, 6});
    auto* attr = m.node->add_attribute();
    attr->set_name("mode");
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s(mode);
    ExpectNear(Run1(m.model, {1, 2, 3}), want, mode);
  }
}

TEST(OnnxShapeOps, NegativePadsCrop) {
  OneNodeModel m("Pad", 13);
  m.Input("X", {1, 2, 3}).Constant(Ints("pads", {0, 0, -1, 0, 0, 1})).Output("Y", {1, 2, 3});
  ExpectNear(Run1(m.model, Range(6)), {1, 2, 0, 4, 5, 0}, "first column cropped, one zero added");
}

TEST(OnnxShapeOps, PadsBeyondTheEngineOrCroppingEverythingNameTheNode) {
  for (const int64_t pad : {int64_t{1} << 40, int64_t{-3}}) {
    OneNodeModel m("Pad", 13);
    m.Input("X", {1, 3}).Constant(Ints("pads", {0, 0, 0, pad})).Output("Y", {1, 3});
    ExpectErrorNamingNode(m.model, "not 1 to 2^31-1");
  }
}

TEST(OnnxShapeOps, DepthToSpaceAndSpaceToDepthAsOnnxDefinesThem) {
  // x = 0..7 of (1,8,1,1); blocksize 2. DCR: output (c,h,w) = x[(h*2+w)*2 + c];
  // CRD: x[c*4 + h*2 + w].
  {
    OneNodeModel m("DepthToSpace", 13);
    m.Input("X", {1, 8, 1, 1}).Output("Y", {1, 2, 2, 2});
    SetInt(m.node, "blocksize", 2);
    ExpectNear(Run1(m.model, Range(8)), {0, 2, 4, 6, 1, 3, 5, 7}, "DCR");
  }
  {
    OneNodeModel m("DepthToSpace", 13);
    m.Input("X", {1, 8, 1, 1}).Output("Y", {1, 2, 2, 2});
    SetInt(m.node, "blocksize", 2);
    auto* attr = m.node->add_attribute();
    attr->set_name("mode");
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s("CRD");
    ExpectNear(Run1(m.model, Range(8)), Range(8), "CRD of 1x1 pixels keeps the order");
  }
  {
    // (1,1,2,2) -> (1,4,1,1): channel (bh*2 + bw) holds pixel (bh, bw).
    OneNodeModel m("SpaceToDepth", 13);
    m.Input("X", {1, 1, 2, 2}).Output("Y", {1, 4, 1, 1});
    SetInt(m.node, "blocksize", 2);
    ExpectNear(Run1(m.model, Range(4)), Range(4), "SpaceToDepth");
  }
}

TEST(OnnxShapeOps, DepthToSpaceWithABadBlocksizeNamesTheNodeBeforeShapeInference) {
  // ONNX 1.12's inference divides by blocksize^2: 2^40 wraps it to 0 (SIGFPE).
  for (const int64_t b : {int64_t{0}, int64_t{1} << 40}) {
    OneNodeModel m("DepthToSpace", 13);
    m.Input("X", {1, 8, 1, 1}).Output("Y", {1, 2, 2, 2});
    SetInt(m.node, "blocksize", b);
    ExpectErrorNamingNode(m.model, fmt::format("blocksize {} is out of range", b));
  }
  OneNodeModel m("SpaceToDepth", 13);
  m.Input("X", {1, 1, 2, 2}).Output("Y", {1, 4, 1, 1});
  SetInt(m.node, "blocksize", 0);
  ExpectErrorNamingNode(m.model, "blocksize 0 is out of range");
}

TEST(OnnxShapeOps, UnsqueezeAndSqueezeWithAxesAsInput) {
  OneNodeModel u("Unsqueeze", 13);
  u.Input("X", {2, 3}).Constant(Ints("axes", {-1, 0})).Output("Y", {1, 2, 3, 1});
  ExpectNear(Run1(u.model, Range(6)), Range(6), "data unchanged");
  OneNodeModel s("Squeeze", 13);
  s.Input("X", {1, 3, 1}).Constant(Ints("axes", {0})).Output("Y", {3, 1});
  ExpectNear(Run1(s.model, Range(3)), Range(3), "data unchanged");
}

TEST(OnnxShapeOps, GatherElementsPicksAlongTheAxisWithNegativeIndices) {
  OneNodeModel m("GatherElements", 13);
  onnx::TensorProto indices = Ints("idx", {0, -1, 1, 0});
  indices.clear_dims();
  indices.add_dims(2);
  indices.add_dims(2);
  m.Input("X", {2, 2}).Constant(indices).Output("Y", {2, 2});
  SetInt(m.node, "axis", 1);
  // x = [[0,1],[2,3]]: y[i][j] = x[i][idx[i][j]] = [[0,1],[3,2]]
  ExpectNear(Run1(m.model, Range(4)), {0, 1, 3, 2}, "torch.gather along dim 1");
}

TEST(OnnxShapeOps, SizeCountsTheElementsOfTheWholeValue) {
  OneNodeModel m("Size", 13);
  m.Input("X", {2, 3, 4}).Output("Y", {});
  auto* y = m.model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
  y->set_elem_type(onnx::TensorProto::INT64);
  y->mutable_shape();  // a scalar: a shape of no dims
  ExpectNear(Run1(m.model, Range(24)), {24}, "2 * 3 * 4, batch included");
}

// ---- ConvTranspose ----

// X = [[1,2],[3,4]] of (1,1,2,2), W all ones (1,1,2,2); each input element
// adds itself to the 2x2 block it reaches.
OneNodeModel ConvTransposeModel(const std::vector<int64_t>& out) {
  OneNodeModel m("ConvTranspose", 13);
  m.Input("X", {1, 1, 2, 2})
      .Constant(FloatTensor("W", {1, 1, 2, 2}, {1, 1, 1, 1}))
      .Output("Y", out);
  return m;
}

TEST(OnnxShapeOps, ConvTransposeScattersEveryInputOverTheKernel) {
  OneNodeModel m = ConvTransposeModel({1, 1, 3, 3});
  EXPECT_EQ(OperatorTypes(ConvertOnnx(m.model))[1], "nn.ConvTranspose2d");
  ExpectNear(Run1(m.model, {1, 2, 3, 4}), {1, 3, 2, 4, 10, 6, 3, 7, 4}, "stride 1");
}

TEST(OnnxShapeOps, ConvTransposeWithStrideTwoPlacesBlocksApart) {
  OneNodeModel m = ConvTransposeModel({1, 1, 4, 4});
  SetInts(m.node, "strides", {2, 2});
  ExpectNear(Run1(m.model, {1, 2, 3, 4}), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4},
             "stride 2");
}

TEST(OnnxShapeOps, ConvTransposeAsymmetricPadsCutTheEnd) {
  OneNodeModel m = ConvTransposeModel({1, 1, 2, 2});
  SetInts(m.node, "pads", {0, 0, 1, 1});
  ExpectNear(Run1(m.model, {1, 2, 3, 4}), {1, 3, 4, 10}, "the last row and column cut");
}

TEST(OnnxShapeOps, ConvTransposeOutputShapeBeyondTheScatterPadsTheEnd) {
  OneNodeModel m = ConvTransposeModel({1, 1, 4, 4});
  SetInts(m.node, "output_shape", {4, 4});
  ExpectNear(Run1(m.model, {1, 2, 3, 4}), {1, 3, 2, 0, 4, 10, 6, 0, 3, 7, 4, 0, 0, 0, 0, 0},
             "the 3x3 scatter, then zeros (ONNX Runtime's rule)");
}

TEST(OnnxShapeOps, ConvTransposeWithAComputedWeightNamesTheNode) {
  OneNodeModel m("ConvTranspose", 13);
  m.Input("X", {1, 1, 2, 2}).Input("W", {1, 1, 2, 2}).Output("Y", {1, 1, 3, 3});
  ExpectErrorNamingNode(m.model, "input 1 must be a constant");
}

}  // namespace
}  // namespace kuiper::testing
