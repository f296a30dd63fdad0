// A symbolic batch (`dim_param` on dimension 0 of a graph input, as
// torch.onnx.export writes for dynamic_axes={"input": {0: "batch"}}): the graph
// is converted at batch 1 and runs at the batch it is given (docs/onnx.md §2).
#include <gtest/gtest.h>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

// Dimension 0 of the graph's input and output becomes the symbol `symbol`.
void MakeBatchSymbolic(onnx::ModelProto& model, const std::string& symbol) {
  model.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param(symbol);
  model.mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param(symbol);
}

TEST(OnnxDynamicBatch, RunsAtTheBatchOfTheInput) {
  OneNodeModel m("Relu", 13);
  m.Input("X", {1, 2, 3}).Output("Y", {1, 2, 3});
  MakeBatchSymbolic(m.model, "batch");
  RuntimeGraph runtime(ConvertOnnx(m.model), "test");
  runtime.Build();
  const std::vector<float> x = Iota(18, -2.f, 0.3f);  // 3 items of (2,3)
  std::vector<float> want;
  for (float v : x) want.push_back(std::max(v, 0.f));
  const std::vector<sftensor> batch = ValuesToBatch(x, {3, 2, 3});
  const std::vector<sftensor> out =
      runtime.Forward(std::vector<std::vector<sftensor>>{batch}).at(0);
  ASSERT_EQ(out.size(), 3u) << "one output item per input item; see docs/onnx.md §2";
  EXPECT_EQ(MaxAbsDiff(BatchToValues(out), want), 0.f);
}

// A graph whose values do not all start with the batch is one batch item
// (single-item mode), whose size is fixed: the symbolic batch is refused.
TEST(OnnxDynamicBatch, OutsideBatchModeIsRefusedNamingTheInput) {
  OneNodeModel m("Transpose", 13);
  m.Input("X", {1, 2, 3}).Output("Y", {2, 1, 3});
  auto* perm = m.node->add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int64_t d : {1, 0, 2}) perm->add_ints(d);
  m.model.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("n");
  try {
    ConvertOnnx(m.model);
    FAIL() << "no error";
  } catch (const ConversionError& e) {
    EXPECT_NE(std::string(e.what()).find("graph input 'X' has a symbolic batch ('n')"),
              std::string::npos)
        << e.what();
  }
}

// Only dimension 0 may be symbolic.
TEST(OnnxDynamicBatch, AnotherSymbolicDimIsRefusedNamingTheInput) {
  OneNodeModel m("Relu", 13);
  m.Input("X", {1, 2, 3}).Output("Y", {1, 2, 3});
  m.model.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_param("channels");
  try {
    ConvertOnnx(m.model);
    FAIL() << "no error";
  } catch (const ConversionError& e) {
    EXPECT_NE(std::string(e.what()).find("graph input 'X' has no fixed shape"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kuiper::testing
