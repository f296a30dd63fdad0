// The YOLOv5 Detect head in a plain torch.onnx.export (onnx/test/data/
// make_detect_head.py: models/yolov5s.py's Detect with nc=2 on three small
// feature maps, a batch of 2) becomes one models.yolo.Detect per level, runs
// like PyTorch, and every difference from the head it knows stops the
// conversion naming the node.
#include <gtest/gtest.h>

#include "kuiper/npy.hpp"
#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

std::string Data(const std::string& file) {
  return std::string(KUIPER_SOURCE_DIR) + "/onnx/test/data/" + file;
}

onnx::ModelProto Head(const std::string& file = "detect_head.onnx") {
  return ReadOnnxModel(Data(file));
}

std::vector<float> RunHead(const onnx::ModelProto& model) {
  std::vector<std::vector<float>> inputs;
  for (int i = 0; i < 3; ++i)
    inputs.push_back(LoadNpy(Data(fmt::format("detect_head.x{}.npy", i))).data);
  return RunGraph(ConvertOnnx(model), inputs);
}

// The `index`-th node of type `type` in the model, to be changed by a test.
onnx::NodeProto& NodeOfType(onnx::ModelProto& model, const std::string& type, int index = 0) {
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() == type && index-- == 0) return node;
  }
  throw Error("the fixture has no such node: " + type);
}

// The value of the Constant node or initializer named `name`.
onnx::TensorProto& ConstantNamed(onnx::ModelProto& model, const std::string& name) {
  for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
    if (node.op_type() == "Constant" && node.output(0) == name) {
      return *node.mutable_attribute(0)->mutable_t();
    }
  }
  for (onnx::TensorProto& init : *model.mutable_graph()->mutable_initializer()) {
    if (init.name() == name) return init;
  }
  throw Error("the fixture has no constant " + name);
}

// The node of type `type` that reads `value` first.
const onnx::NodeProto& ReaderOf(const onnx::ModelProto& model, const std::string& value,
                                const std::string& type) {
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (node.op_type() == type && node.input(0) == value) return node;
  }
  throw Error("the fixture has no " + type + " reading " + value);
}

void SetFloats(onnx::TensorProto& tensor, const std::vector<float>& values) {
  tensor.clear_raw_data();
  tensor.clear_float_data();
  for (float v : values) tensor.add_float_data(v);
}

// Expects the conversion to stop naming `node` and saying `text`.
void ExpectRefused(const onnx::ModelProto& model, const onnx::NodeProto& node,
                   const std::string& text) {
  try {
    ConvertOnnx(model);
    FAIL() << "no error";
  } catch (const ConversionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node '" + node.name() + "'"), std::string::npos) << what;
    EXPECT_NE(what.find(text), std::string::npos) << what;
    EXPECT_NE(what.find("YOLOv5 Detect head"), std::string::npos) << what;
  }
}

size_t CountOf(const pnnx::Graph& graph, const std::string& type) {
  const std::vector<std::string> types = OperatorTypes(graph);
  return std::count(types.begin(), types.end(), type);
}

TEST(DetectHead, EachLevelBecomesOneDetectOperator) {
  const pnnx::Graph graph = ConvertOnnx(Head());
  EXPECT_EQ(CountOf(graph, "models.yolo.Detect"), 3u);
  EXPECT_EQ(CountOf(graph, "torch.cat"), 1u);            // the levels, joined as exported
  EXPECT_EQ(graph.operators.size(), 3u + 3u + 1u + 1u);  // inputs, heads, cat, output
  const pnnx::Operator& level1 = graph.operators[4];
  EXPECT_EQ(level1.params.at("nc").i, 2);
  EXPECT_EQ(level1.params.at("na").i, 3);
  EXPECT_EQ(level1.attrs.at("strides").ToFloat(), std::vector<float>{16});
  EXPECT_EQ(level1.attrs.at("anchors").ToFloat(), (std::vector<float>{30, 61, 62, 45, 59, 119}));
  EXPECT_EQ(level1.attrs.at("m.0.weight").shape, (std::vector<int>{21, 8, 1, 1}));
}

TEST(DetectHead, MatchesPyTorch) {
  const std::vector<float> expected = LoadNpy(Data("detect_head.output.npy")).data;
  float max_abs = 0;
  for (float v : expected) max_abs = std::max(max_abs, std::abs(v));
  EXPECT_LE(MaxAbsDiff(RunHead(Head()), expected), 1e-5f * max_abs);
}

TEST(DetectHead, Opset13WithUnsqueezeAxesAsInputMatchesToo) {
  EXPECT_EQ(RunHead(Head("detect_head_opset13.onnx")), RunHead(Head()));
}

TEST(DetectHead, AnotherPermutationIsRefused) {
  onnx::ModelProto model = Head();
  onnx::NodeProto& transpose = NodeOfType(model, "Transpose");
  transpose.mutable_attribute(0)->set_ints(3, 2);
  transpose.mutable_attribute(0)->set_ints(2, 3);
  ExpectRefused(model, transpose, "expected perm=(0,1,3,4,2)");
}

TEST(DetectHead, AnotherActivationIsRefused) {
  onnx::ModelProto model = Head();
  onnx::NodeProto& sigmoid = NodeOfType(model, "Sigmoid");
  sigmoid.set_op_type("Relu");
  ExpectRefused(model, sigmoid, "expected Sigmoid here");
}

TEST(DetectHead, AnotherOffsetThanHalfAPixelIsRefused) {
  onnx::ModelProto model = Head();
  const onnx::NodeProto& sub = NodeOfType(model, "Sub", 1);
  SetFloats(ConstantNamed(model, sub.input(1)), {0.25f});
  ExpectRefused(model, sub, "expected the constant 0.5, found (0.25)");
}

TEST(DetectHead, AGridThatIsNotTheCellIndicesIsRefused) {
  // The grid is folded from arange -> Expand -> Unsqueeze -> Concat -> Reshape
  // -> Cast; a wrong arange makes a wrong grid.
  onnx::ModelProto model = Head();
  onnx::NodeProto& expand = NodeOfType(model, "Expand", 1);  // the x indices (1, nx)
  onnx::TensorProto& arange = ConstantNamed(model, expand.input(0));
  arange.clear_raw_data();
  for (int64_t x : {0, 1, 2, 3, 4, 5, 6, 8}) arange.add_int64_data(x);
  ExpectRefused(model, NodeOfType(model, "Add"), "expected grid[y=0, x=7] = (7,0), found (8,0)");
}

TEST(DetectHead, MoreThanOneStrideIsRefused) {
  onnx::ModelProto model = Head();
  const onnx::NodeProto& stride_mul = ReaderOf(model, NodeOfType(model, "Add").output(0), "Mul");
  onnx::TensorProto& stride = ConstantNamed(model, stride_mul.input(1));
  stride.add_dims(2);
  SetFloats(stride, {8, 16});
  ExpectRefused(model, stride_mul, "expected one positive stride");
}

TEST(DetectHead, AnchorsOfAnotherShapeAreRefused) {
  onnx::ModelProto model = Head();
  const onnx::NodeProto& anchor_mul = ReaderOf(model, NodeOfType(model, "Pow").output(0), "Mul");
  onnx::TensorProto& anchors = ConstantNamed(model, anchor_mul.input(1));
  anchors.set_dims(1, 1);  // (1,1,1,1,2): one pair for every anchor
  SetFloats(anchors, {10, 13});
  ExpectRefused(model, anchor_mul, "expected anchors of shape (1,3,1,1,2)");
}

TEST(DetectHead, AnotherExponentIsRefused) {
  onnx::ModelProto model = Head();
  const onnx::NodeProto& pow = NodeOfType(model, "Pow");
  SetFloats(ConstantNamed(model, pow.input(1)), {3.f});
  ExpectRefused(model, pow, "expected the constant 2, found (3)");
}

TEST(DetectHead, AFiveDimensionalReshapeOfSomethingElseIsRefused) {
  onnx::ModelProto model = Head();
  onnx::NodeProto& reshape = NodeOfType(model, "Reshape");
  // Read the feature map directly instead of the 1x1 convolution.
  reshape.set_input(0, "x0");
  ExpectRefused(model, reshape, "its input must be a 1x1 Conv");
}

}  // namespace
}  // namespace kuiper::testing
