// The YOLOv5 Detect head in a plain torch.onnx.export (onnx/test/data/
// make_detect_head.py: models/yolov5s.py's Detect with nc=2 on three small
// feature maps, a batch of 2) is fused into one models.yolo.Detect per level,
// as an optimisation: node by node it gives the same output, and a head that
// differs from the known form in anything is not fused but still runs.
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

OnnxImportOptions NodeByNode() {
  OnnxImportOptions options;
  options.fuse_detect_head = false;
  return options;
}

std::vector<float> RunHead(const onnx::ModelProto& model, const OnnxImportOptions& options = {}) {
  std::vector<std::vector<float>> inputs;
  for (int i = 0; i < 3; ++i)
    inputs.push_back(LoadNpy(Data(fmt::format("detect_head.x{}.npy", i))).data);
  return RunGraph(ConvertOnnx(model, options), inputs);
}

// Max |v| of a reference, for tolerances relative to it.
float MaxAbs(const std::vector<float>& values) {
  float max_abs = 0;
  for (float v : values) max_abs = std::max(max_abs, std::abs(v));
  return max_abs;
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

// Expects the level a test changed not to be fused, the other two to be, and
// the model to run.
void ExpectNotFused(const onnx::ModelProto& model) {
  const pnnx::Graph graph = ConvertOnnx(model);
  EXPECT_EQ(CountOf(graph, "models.yolo.Detect"), 2u) << "see docs/onnx.md §6";
  EXPECT_EQ(RunHead(model).size(), 2u * 252u * 7u);
}

// Expects converting or running the model to fail naming `node`.
void ExpectErrorNaming(const onnx::ModelProto& model, const onnx::NodeProto& node) {
  try {
    RunHead(model);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(node.name()), std::string::npos) << e.what();
  }
}

TEST(DetectHead, MatchesPyTorch) {
  const std::vector<float> expected = LoadNpy(Data("detect_head.output.npy")).data;
  EXPECT_LE(MaxAbsDiff(RunHead(Head()), expected), 1e-5f * MaxAbs(expected));
}

TEST(DetectHead, NodeByNodeHasNoDetectOperator) {
  const pnnx::Graph graph = ConvertOnnx(Head(), NodeByNode());
  EXPECT_EQ(CountOf(graph, "models.yolo.Detect"), 0u);
  EXPECT_EQ(CountOf(graph, "torch.permute"), 3u);  // one 5-D Transpose per level
}

TEST(DetectHead, NodeByNodeMatchesPyTorch) {
  const std::vector<float> expected = LoadNpy(Data("detect_head.output.npy")).data;
  EXPECT_LE(MaxAbsDiff(RunHead(Head(), NodeByNode()), expected), 1e-5f * MaxAbs(expected));
}

TEST(DetectHead, FusedAndNodeByNodeAgree) {
  const std::vector<float> fused = RunHead(Head());
  EXPECT_LE(MaxAbsDiff(RunHead(Head(), NodeByNode()), fused), 1e-6f * MaxAbs(fused));
}

// Later Ultralytics releases split the sigmoid's output with one Split node,
// shift the grid by -0.5 beforehand and expand the anchors to every cell
// (make_detect_head.py, SplitDetect): not the fused form, run node by node.
TEST(DetectHead, UltralyticsSplitHeadRunsNodeByNodeAndMatchesPyTorch) {
  const onnx::ModelProto model = Head("detect_head_split.onnx");
  EXPECT_EQ(CountOf(ConvertOnnx(model), "models.yolo.Detect"), 0u);
  const std::vector<float> expected = LoadNpy(Data("detect_head_split.output.npy")).data;
  EXPECT_LE(MaxAbsDiff(RunHead(model), expected), 1e-5f * MaxAbs(expected));
}

TEST(DetectHead, Opset13WithUnsqueezeAxesAsInputMatchesToo) {
  EXPECT_EQ(RunHead(Head("detect_head_opset13.onnx")), RunHead(Head()));
}

TEST(DetectHead, AnotherPermutationIsNotFused) {
  onnx::ModelProto model = Head();
  onnx::NodeProto& transpose = NodeOfType(model, "Transpose");
  transpose.mutable_attribute(0)->set_ints(3, 2);
  transpose.mutable_attribute(0)->set_ints(2, 3);
  // Not fused; node by node, the shapes the model declares after it no longer
  // fit, which the conversion says naming the node.
  ExpectErrorNaming(model, transpose);
}

TEST(DetectHead, AnotherActivationIsNotFused) {
  onnx::ModelProto model = Head();
  onnx::NodeProto& sigmoid = NodeOfType(model, "Sigmoid");
  sigmoid.set_op_type("Relu");
  ExpectNotFused(model);
}

TEST(DetectHead, AnotherOffsetThanHalfAPixelIsNotFused) {
  onnx::ModelProto model = Head();
  const onnx::NodeProto& sub = NodeOfType(model, "Sub", 1);
  SetFloats(ConstantNamed(model, sub.input(1)), {0.25f});
  ExpectNotFused(model);
  // That Sub is level 1's (stride 16): it moves every box centre by
  // (0.5 - 0.25) * 16 = 4 pixels in x and y. Level 1's rows are 3 * 4 * 4,
  // after level 0's 3 * 8 * 8, of each item's 252.
  std::vector<float> expected = LoadNpy(Data("detect_head.output.npy")).data;
  for (int item = 0; item < 2; ++item) {
    for (int row = 192; row < 192 + 48; ++row) {
      for (int k = 0; k < 2; ++k) expected[(item * 252 + row) * 7 + k] += 4.f;
    }
  }
  EXPECT_LE(MaxAbsDiff(RunHead(model), expected), 1e-5f * MaxAbs(expected));
}

TEST(DetectHead, AGridThatIsNotTheCellIndicesIsNotFused) {
  // The grid is folded from arange -> Expand -> Unsqueeze -> Concat -> Reshape
  // -> Cast; a wrong arange makes a wrong grid.
  onnx::ModelProto model = Head();
  onnx::NodeProto& expand = NodeOfType(model, "Expand", 1);  // the x indices (1, nx)
  onnx::TensorProto& arange = ConstantNamed(model, expand.input(0));
  arange.clear_raw_data();
  for (int64_t x : {0, 1, 2, 3, 4, 5, 6, 8}) arange.add_int64_data(x);
  ExpectNotFused(model);
}

TEST(DetectHead, MoreThanOneStrideIsNotFused) {
  onnx::ModelProto model = Head();
  const onnx::NodeProto& stride_mul = ReaderOf(model, NodeOfType(model, "Add").output(0), "Mul");
  onnx::TensorProto& stride = ConstantNamed(model, stride_mul.input(1));
  stride.add_dims(2);
  SetFloats(stride, {8, 16});
  ExpectNotFused(model);
}

TEST(DetectHead, AnchorsOfAnotherShapeAreNotFused) {
  onnx::ModelProto model = Head();
  const onnx::NodeProto& anchor_mul = ReaderOf(model, NodeOfType(model, "Pow").output(0), "Mul");
  onnx::TensorProto& anchors = ConstantNamed(model, anchor_mul.input(1));
  anchors.set_dims(1, 1);  // (1,1,1,1,2): one pair for every anchor
  SetFloats(anchors, {10, 13});
  ExpectNotFused(model);
}

TEST(DetectHead, AnotherExponentIsNotFused) {
  onnx::ModelProto model = Head();
  const onnx::NodeProto& pow = NodeOfType(model, "Pow");
  SetFloats(ConstantNamed(model, pow.input(1)), {3.f});
  ExpectNotFused(model);
}

TEST(DetectHead, AFiveDimensionalReshapeOfSomethingElseIsNotFused) {
  onnx::ModelProto model = Head();
  onnx::NodeProto& reshape = NodeOfType(model, "Reshape");
  // Read the feature map (2,4,8,8) directly instead of the 1x1 convolution's
  // (2,21,8,8): not a head, and its 256 values per item cannot take the
  // shape (3,7,8,8).
  reshape.set_input(0, "x0");
  ExpectErrorNaming(model, reshape);
}

}  // namespace
}  // namespace kuiper::testing
