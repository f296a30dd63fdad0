// RuntimeGraph::Build fuses a ReLU or SiLU into the convolution or expression
// before it when the activation is the only reader of that operator's output.
#include <gtest/gtest.h>

#include <memory>

#include "kuiper/graph.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {
namespace {

const std::string kTinyNet = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/tiny_net";

const ConvolutionLayer& Convolution(const RuntimeGraph& graph, const std::string& name) {
  const RuntimeOperator* op = graph.FindOperator(name);
  EXPECT_NE(op, nullptr) << name;
  const auto* conv = dynamic_cast<const ConvolutionLayer*>(op->layer.get());
  EXPECT_NE(conv, nullptr) << name << " is not a convolution";
  return *conv;
}

// tiny_net (conv1 -> relu -> pool -> conv2 -> add(conv2, pool) -> ReLU -> ...),
// built and run once on a random input.
std::unique_ptr<RuntimeGraph> TinyNetAfterOneForward() {
  auto graph = std::make_unique<RuntimeGraph>(kTinyNet + ".pnnx.param", kTinyNet + ".pnnx.bin");
  graph->Build();
  sftensor x = TensorCreate(3, 16, 16);
  x->Rand();
  graph->Forward({x});
  return graph;
}

TEST(ActivationFusion, ReluReadingOnlyAConvolutionIsFusedIntoIt) {
  const auto tiny = TinyNetAfterOneForward();
  const RuntimeGraph& graph = *tiny;
  EXPECT_EQ(Convolution(graph, "conv1").activation(), Activation::kRelu);
  // The ReLU's output operand holds the convolution's own tensors.
  EXPECT_EQ(graph.FindOperator("relu")->output_operand->datas,
            graph.FindOperator("conv1")->output_operand->datas);
}

TEST(ActivationFusion, ConvolutionReadByAnExpressionKeepsItsOutput) {
  const auto tiny = TinyNetAfterOneForward();
  const RuntimeGraph& graph = *tiny;
  // conv2's output goes to add(...), which is not an activation.
  EXPECT_EQ(Convolution(graph, "conv2").activation(), Activation::kNone);
  EXPECT_NE(graph.FindOperator("conv2")->output_operand->datas,
            graph.FindOperator("pnnx_expr_0")->output_operand->datas);
}

TEST(ActivationFusion, ReluReadingOnlyAnAddIsFusedIntoIt) {
  const auto tiny = TinyNetAfterOneForward();
  const RuntimeGraph& graph = *tiny;
  // The ReLU after the residual add passes the add's own tensors on ...
  ASSERT_EQ(graph.FindOperator("pnnx_unique_0")->output_operand->datas,
            graph.FindOperator("pnnx_expr_0")->output_operand->datas);
  // ... which the add has already put through the ReLU.
  for (const sftensor& t : graph.FindOperator("pnnx_expr_0")->output_operand->datas) {
    EXPECT_GE(t->data().min(), 0.f);
    EXPECT_GT(t->data().max(), 0.f);
  }
}

TEST(ActivationFusion, FusedConvolutionMatchesConvolutionThenActivation) {
  // A 3x3 convolution with bias, fused with SiLU, against the unfused
  // convolution followed by x / (1 + e^-x) element by element, in double.
  ConvParams p;
  p.in_channels = 4, p.out_channels = 6;
  p.kernel_h = p.kernel_w = 3;
  p.padding_h = p.padding_w = 1;
  std::vector<float> weight(6 * 4 * 3 * 3), bias(6);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = 0.05f * float(int(i % 17) - 8);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.3f * float(i) - 0.7f;
  ConvolutionLayer plain("plain", p, weight, bias), fused("fused", p, weight, bias);
  ASSERT_TRUE(fused.FuseActivation(Activation::kSilu));
  EXPECT_FALSE(fused.FuseActivation(Activation::kRelu));  // one activation only
  sftensor x = TensorCreate(4, 40, 40);                   // 1600 positions: unfolded block by block
  x->Rand();
  std::vector<sftensor> expected(1), got(1);
  ASSERT_EQ(plain.Forward({x}, expected), InferStatus::kInferSuccess);
  ASSERT_EQ(fused.Forward({x}, got), InferStatus::kInferSuccess);
  for (uint32_t i = 0; i < expected[0]->size(); ++i) {
    const double v = expected[0]->index(i);
    ASSERT_NEAR(got[0]->index(i), v / (1.0 + std::exp(-v)), 1e-6) << "element " << i;
  }
}

}  // namespace
}  // namespace kuiper
