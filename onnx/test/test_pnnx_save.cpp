// pnnx::Save writes what pnnx::Load reads back: operators, parameters of every
// kind, attributes with their data, operand annotations.
#include <gtest/gtest.h>

#include "onnx_test_util.hpp"
#include "test_files.hpp"

namespace kuiper::testing {
namespace {

TEST(PnnxSave, ReadsBackIdentically) {
  OneNodeModel m("Gemm", 13);
  m.Input("X", {2, 3}).Constant(FloatTensor("W", {3, 4}, Iota(12))).Output("Y", {2, 4});
  pnnx::Graph graph = ConvertOnnx(m.model);
  pnnx::Operator& op = graph.operators[1];
  pnnx::Parameter f, fs, s;
  f.type = pnnx::ParameterType::kFloat;
  f.f = 0.1f;
  fs.type = pnnx::ParameterType::kFloatArray;
  fs.af = {1.f, 2.5f, -1e-7f};
  s.type = pnnx::ParameterType::kString;
  s.s = "nearest";
  op.params["a_float"] = f;
  op.params["a_floats"] = fs;
  op.params["a_null"] = pnnx::Parameter{};
  op.params["a_string"] = s;
  const std::string param = test::BinaryDir() + "/onnx_save_test.pnnx.param";
  const std::string bin = test::BinaryDir() + "/onnx_save_test.pnnx.bin";
  pnnx::Save(graph, param, bin);
  const pnnx::Graph back = pnnx::Load(param, bin);
  ASSERT_EQ(back.operators.size(), graph.operators.size());
  ASSERT_EQ(back.operands.size(), graph.operands.size());
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    const pnnx::Operator &a = graph.operators[i], &b = back.operators[i];
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.name, b.name);
    ASSERT_EQ(a.params.size(), b.params.size());
    for (const auto& [key, p] : a.params) {
      const pnnx::Parameter& q = b.params.at(key);
      EXPECT_EQ(p.type, q.type) << key;
      EXPECT_EQ(p.b, q.b);
      EXPECT_EQ(p.i, q.i);
      EXPECT_EQ(p.f, q.f);
      EXPECT_EQ(p.s, q.s);
      EXPECT_EQ(p.ai, q.ai);
      EXPECT_EQ(p.af, q.af);
    }
    ASSERT_EQ(a.attrs.size(), b.attrs.size());
    for (const auto& [key, attr] : a.attrs) {
      EXPECT_EQ(attr.shape, b.attrs.at(key).shape);
      EXPECT_EQ(attr.data, b.attrs.at(key).data);
    }
    ASSERT_EQ(a.inputs.size(), b.inputs.size());
    for (size_t k = 0; k < a.inputs.size(); ++k) {
      EXPECT_EQ(graph.operands[a.inputs[k]].name, back.operands[b.inputs[k]].name);
      EXPECT_EQ(graph.operands[a.inputs[k]].shape, back.operands[b.inputs[k]].shape);
    }
  }
}

}  // namespace
}  // namespace kuiper::testing
