// torch.onnx.export writes nn.SiLU as x * Sigmoid(x); the importer makes it one
// nn.SiLU (Context::FindSilu), which the runtime fuses into the convolution
// before it and computes within two ulps of the exact value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

// A graph X (1,2,3) -> nodes -> Y, the nodes given as (type, inputs, output).
onnx::ModelProto Chain(
    const std::vector<std::tuple<std::string, std::vector<std::string>, std::string>>& nodes,
    const std::vector<std::string>& outputs = {"Y"}) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  *g->add_input() = ValueInfo("X", {1, 2, 3});
  for (const auto& [type, inputs, output] : nodes) AddNode(g, type, inputs, output);
  for (const std::string& out : outputs) *g->add_output() = ValueInfo(out, {1, 2, 3});
  return model;
}

size_t Count(const pnnx::Graph& graph, const std::string& type) {
  const std::vector<std::string> types = OperatorTypes(graph);
  return std::count(types.begin(), types.end(), type);
}

std::vector<float> X() { return {-3.f, -1.f, -0.25f, 0.f, 0.5f, 4.f}; }

// x / (1 + e^-x) in double, rounded once.
std::vector<float> SiluOf(const std::vector<float>& x) {
  std::vector<float> y;
  for (float v : x) y.push_back(static_cast<float>(v / (1.0 + std::exp(-static_cast<double>(v)))));
  return y;
}

TEST(OnnxSilu, MulOfSigmoidOfTheSameValueBecomesOneSilu) {
  const onnx::ModelProto model = Chain({{"Sigmoid", {"X"}, "s"}, {"Mul", {"X", "s"}, "Y"}});
  const pnnx::Graph converted = ConvertOnnx(model);
  EXPECT_EQ(Count(converted, "nn.SiLU"), 1u);
  EXPECT_EQ(Count(converted, "nn.Sigmoid"), 0u);
  EXPECT_EQ(Count(converted, "pnnx.Expression"), 0u);
  EXPECT_EQ(RunGraph(converted, {X()}), SiluOf(X()));
}

TEST(OnnxSilu, EitherOperandOrderIsSilu) {
  const pnnx::Graph converted =
      ConvertOnnx(Chain({{"Sigmoid", {"X"}, "s"}, {"Mul", {"s", "X"}, "Y"}}));
  EXPECT_EQ(Count(converted, "nn.SiLU"), 1u);
  EXPECT_EQ(RunGraph(converted, {X()}), SiluOf(X()));
}

TEST(OnnxSilu, ASigmoidReadElsewhereStays) {
  // s is a graph output too: it must still be computed.
  const pnnx::Graph converted =
      ConvertOnnx(Chain({{"Sigmoid", {"X"}, "s"}, {"Mul", {"X", "s"}, "Y"}}, {"Y", "s"}));
  EXPECT_EQ(Count(converted, "nn.SiLU"), 1u);
  EXPECT_EQ(Count(converted, "nn.Sigmoid"), 1u);
}

TEST(OnnxSilu, MulOfTheSigmoidOfAnotherValueIsNotSilu) {
  // Y = Neg(X) * Sigmoid(X): not x * sigmoid(x).
  const pnnx::Graph converted =
      ConvertOnnx(Chain({{"Sigmoid", {"X"}, "s"}, {"Neg", {"X"}, "n"}, {"Mul", {"n", "s"}, "Y"}}));
  EXPECT_EQ(Count(converted, "nn.SiLU"), 0u);
  EXPECT_EQ(Count(converted, "nn.Sigmoid"), 1u);
  std::vector<float> want;
  for (float v : X()) want.push_back(-v * (1.f / (1.f + std::exp(-v))));
  EXPECT_LE(MaxAbsDiff(RunGraph(converted, {X()}), want), 1e-6f);
}

}  // namespace
}  // namespace kuiper::testing
