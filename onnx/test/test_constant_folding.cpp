// Constant folding: Expand, Concat, Cast, Reshape and Unsqueeze on constants
// are evaluated during conversion (none of them is an engine operator), and
// the folded value is checked by adding it to an input: Y = X + folded. A
// model may declare any shape for a folded value, so a shape the folding
// cannot compute with stops the conversion naming the node, and the folded
// values count against the memory limit before they are allocated.
#include <gtest/gtest.h>

#include <limits>

#include "kuiper/error.hpp"
#include "kuiper/memory_limit.hpp"
#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

onnx::TensorProto IntTensor(const std::string& name, const std::vector<int64_t>& shape,
                            const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : shape) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

void SetInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

// X (2,3) + c, where `nodes` compute "c" from `constants` alone.
class FoldedModel {
 public:
  FoldedModel() {
    model_.set_ir_version(7);
    model_.add_opset_import()->set_version(13);
    *graph()->add_input() = ValueInfo("X", {2, 3});
    *graph()->add_output() = ValueInfo("Y", {2, 3});
  }
  FoldedModel& Constant(const onnx::TensorProto& tensor) {
    *graph()->add_initializer() = tensor;
    return *this;
  }
  onnx::NodeProto& Node(const std::string& type, const std::vector<std::string>& inputs,
                        const std::string& output) {
    onnx::NodeProto* node = graph()->add_node();
    node->set_op_type(type);
    node->set_name(output + "_node");
    for (const std::string& input : inputs) node->add_input(input);
    node->add_output(output);
    return *node;
  }
  // Declares the shape of a value, as an exporter's value_info does.
  FoldedModel& Declare(const std::string& name, const std::vector<int64_t>& shape) {
    *graph()->add_value_info() = ValueInfo(name, shape);
    return *this;
  }
  // Adds Y = X + c and converts.
  pnnx::Graph Convert() {
    Node("Add", {"X", "c"}, "Y");
    return ConvertOnnx(model_);
  }
  // Converts and returns Y for X = 0.
  std::vector<float> FoldedValues(std::vector<std::string>* types = nullptr) {
    const pnnx::Graph graph = Convert();
    if (types) *types = OperatorTypes(graph);
    return RunGraph(graph, {std::vector<float>(6, 0.f)});
  }
  const onnx::ModelProto& model() const { return model_; }

 private:
  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  onnx::ModelProto model_;
};

TEST(ConstantFolding, ExpandRepeatsARowAndLeavesNoOperator) {
  FoldedModel m;
  m.Constant(FloatTensor("row", {1, 3}, {1, 2, 3})).Constant(IntTensor("shape", {2}, {2, 3}));
  m.Node("Expand", {"row", "shape"}, "c");
  std::vector<std::string> types;
  EXPECT_EQ(m.FoldedValues(&types), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(types, (std::vector<std::string>{"pnnx.Input", "pnnx.Attribute", "pnnx.Expression",
                                             "pnnx.Output"}));
}

TEST(ConstantFolding, ConcatJoinsBlocksAlongItsAxisAndCastMakesFloats) {
  FoldedModel m;
  m.Constant(IntTensor("a", {2, 1}, {0, 3})).Constant(IntTensor("b", {2, 2}, {1, 2, 4, 5}));
  SetInt(m.Node("Concat", {"a", "b"}, "ints"), "axis", -1);
  SetInt(m.Node("Cast", {"ints"}, "c"), "to", onnx::TensorProto::FLOAT);
  EXPECT_EQ(m.FoldedValues(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(ConstantFolding, ReshapeAndUnsqueezeKeepTheRowMajorValues) {
  FoldedModel m;
  m.Constant(FloatTensor("v", {3}, {7, 8, 9})).Constant(IntTensor("axes", {1}, {0}));
  m.Node("Unsqueeze", {"v", "axes"}, "row");  // (1,3), broadcast by Add
  m.Node("Reshape", {"row", "row_shape"}, "c");
  m.Constant(IntTensor("row_shape", {2}, {1, 3}));
  EXPECT_EQ(m.FoldedValues(), (std::vector<float>{7, 8, 9, 7, 8, 9}));
}

TEST(ConstantFolding, ANodeReadingAComputedValueIsNotFolded) {
  FoldedModel m;
  m.Constant(IntTensor("shape", {2}, {2, 3}));
  m.Node("Expand", {"X", "shape"}, "c");
  // Converted as an engine operator (Tensor.expand), not evaluated at load time.
  EXPECT_EQ(
      OperatorTypes(m.Convert()),
      (std::vector<std::string>{"pnnx.Input", "Tensor.expand", "pnnx.Expression", "pnnx.Output"}));
}

// The message of the error of type E that converting `m` throws, or "".
template <typename E>
std::string ErrorOf(FoldedModel& m) {
  try {
    m.Convert();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error of the expected type";
  return "";
}

TEST(ConstantFoldingLimits, AnOutputDeclaredWithANegativeDimStopsTheConversion) {
  FoldedModel m;
  m.Constant(FloatTensor("row", {1, 3}, {1, 2, 3})).Constant(IntTensor("shape", {2}, {2, 3}));
  m.Node("Expand", {"row", "shape"}, "c");
  m.Declare("c", {-2, 3});
  EXPECT_EQ(ErrorOf<ConversionError>(m), "node 'c_node' (Expand): shape (-2,3) has a negative dim");
}

// 2^32 * 2^32 = 2^64 elements: the count wrapped around to 0 before.
TEST(ConstantFoldingLimits, AnOutputWhoseCountOverflowsInt64StopsTheConversion) {
  FoldedModel m;
  m.Constant(FloatTensor("row", {1, 3}, {1, 2, 3})).Constant(IntTensor("shape", {2}, {2, 3}));
  m.Node("Expand", {"row", "shape"}, "c");
  m.Declare("c", {int64_t{1} << 32, int64_t{1} << 32});
  EXPECT_EQ(ErrorOf<ConversionError>(m),
            "node 'c_node' (Expand): shape (4294967296,4294967296) has more elements than an "
            "int64 counts");
}

// A 0 makes the count 0, but the dims after it are multiplied when indexing.
TEST(ConstantFoldingLimits, AnOverflowBehindAZeroDimStopsTheConversion) {
  FoldedModel m;
  m.Constant(FloatTensor("row", {1, 3}, {1, 2, 3})).Constant(IntTensor("shape", {2}, {2, 3}));
  m.Node("Expand", {"row", "shape"}, "c");
  m.Declare("c", {0, int64_t{1} << 32, int64_t{1} << 32});
  EXPECT_EQ(ErrorOf<ConversionError>(m),
            "node 'c_node' (Expand): shape (0,4294967296,4294967296) has more elements than an "
            "int64 counts");
}

// (100000,100000,3) is 3e10 values at 32 bytes each while folded.
TEST(ConstantFoldingLimits, AHugeDeclaredOutputIsRefusedBeforeItIsAllocated) {
  FoldedModel m;
  m.Constant(FloatTensor("row", {1, 3}, {1, 2, 3})).Constant(IntTensor("shape", {2}, {2, 3}));
  m.Node("Expand", {"row", "shape"}, "c");
  m.Declare("c", {100000, 100000, 3});
  EXPECT_EQ(ErrorOf<ResourceError>(m),
            "node 'c_node' (Expand): the folded constants up to 'c' (100000,100000,3) would take "
            "960000000000 bytes (894.07 GiB), more than the memory limit of 4294967296 bytes "
            "(4.00 GiB)");
}

// Unsqueeze (3) -> (1,3), then Reshape (1,3) -> (1,3): 3 values of 32 bytes
// each, twice, is 192 bytes.
FoldedModel UnsqueezeThenReshape() {
  FoldedModel m;
  m.Constant(FloatTensor("v", {3}, {7, 8, 9})).Constant(IntTensor("axes", {1}, {0}));
  m.Node("Unsqueeze", {"v", "axes"}, "row");
  m.Node("Reshape", {"row", "row_shape"}, "c");
  m.Constant(IntTensor("row_shape", {2}, {1, 3}));
  return m;
}

TEST(ConstantFoldingLimits, FoldedValuesExactlyAtTheLimitConvert) {
  FoldedModel m = UnsqueezeThenReshape();
  const MemoryLimitScope limit(192);
  EXPECT_EQ(
      OperatorTypes(m.Convert()),
      (std::vector<std::string>{"pnnx.Input", "pnnx.Attribute", "pnnx.Expression", "pnnx.Output"}));
}

TEST(ConstantFoldingLimits, TheLimitCountsEveryFoldedNodeTogether) {
  FoldedModel m = UnsqueezeThenReshape();
  const MemoryLimitScope limit(191);
  EXPECT_EQ(ErrorOf<ResourceError>(m),
            "node 'c_node' (Reshape): the folded constants up to 'c' (1,3) would take 192 bytes "
            "(0.00 GiB), more than the memory limit of 191 bytes (0.00 GiB)");
}

// (2^40) declared, no values held: the folding allocated 2^40 sources (16
// TiB) before the values were read and found missing. The limit is lifted so
// that only the order of the checks stands between the model and the allocation.
TEST(ConstantFoldingLimits, AConstantHoldingFewerValuesThanItsDimsIsRefusedBeforeFolding) {
  FoldedModel m;
  m.Constant(FloatTensor("v", {int64_t{1} << 40}, {})).Constant(IntTensor("s", {1}, {1}));
  m.Node("Reshape", {"v", "s"}, "c");
  m.Declare("c", {int64_t{1} << 40});
  const MemoryLimitScope limit(std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(ErrorOf<ConversionError>(m), "tensor 'v' of shape (1099511627776) holds 0 values");
}

// (2) cannot broadcast to (2,3): the index of its elements ran past its end.
TEST(ConstantFoldingLimits, ExpandOfAShapeThatDoesNotBroadcastStopsTheConversion) {
  FoldedModel m;
  m.Constant(FloatTensor("pair", {2}, {1, 2})).Constant(IntTensor("shape", {2}, {2, 3}));
  m.Node("Expand", {"pair", "shape"}, "c");
  m.Declare("c", {2, 3});
  EXPECT_EQ(ErrorOf<ConversionError>(m),
            "node 'c_node' (Expand): input shape (2) does not broadcast to output shape (2,3)");
}

TEST(ConstantFoldingLimits, ExpandToALowerRankStopsTheConversion) {
  FoldedModel m;
  m.Constant(FloatTensor("block", {1, 2, 3}, {1, 2, 3, 4, 5, 6}));
  m.Constant(IntTensor("shape", {2}, {2, 3}));
  m.Node("Expand", {"block", "shape"}, "c");
  m.Declare("c", {2, 3});
  EXPECT_EQ(ErrorOf<ConversionError>(m),
            "node 'c_node' (Expand): the input has a higher rank than the output");
}

// (2,1) and (1,2) along axis 1 into (2,3): the second input's rows were read
// as if it had two.
TEST(ConstantFoldingLimits, ConcatOfInputsThatDoNotFitTheOutputStopsTheConversion) {
  FoldedModel m;
  m.Constant(FloatTensor("a", {2, 1}, {0, 3})).Constant(FloatTensor("b", {1, 2}, {1, 2}));
  SetInt(m.Node("Concat", {"a", "b"}, "c"), "axis", 1);
  m.Declare("c", {2, 3});
  EXPECT_EQ(ErrorOf<ConversionError>(m),
            "node 'c_node' (Concat): input shape (1,2) does not fit output shape (2,3) along "
            "axis 1");
}

TEST(ConstantFoldingLimits, ConcatAlongAnAxisBeyondTheRankStopsTheConversion) {
  FoldedModel m;
  m.Constant(FloatTensor("a", {2, 1}, {0, 3})).Constant(FloatTensor("b", {2, 2}, {1, 2, 4, 5}));
  SetInt(m.Node("Concat", {"a", "b"}, "c"), "axis", 5);
  m.Declare("c", {2, 3});
  EXPECT_EQ(ErrorOf<ConversionError>(m),
            "node 'c_node' (Concat): axis 5 is out of range for rank 2");
}

TEST(ConstantFoldingLimits, ConcatWhoseInputsDoNotAddUpToTheOutputStopsTheConversion) {
  FoldedModel m;
  m.Constant(FloatTensor("a", {2, 1}, {0, 3})).Constant(FloatTensor("b", {2, 1}, {1, 4}));
  SetInt(m.Node("Concat", {"a", "b"}, "c"), "axis", 1);
  m.Declare("c", {2, 3});
  EXPECT_EQ(ErrorOf<ConversionError>(m),
            "node 'c_node' (Concat): the inputs add up to 2 along axis 1, the output has 3");
}

}  // namespace
}  // namespace kuiper::testing
