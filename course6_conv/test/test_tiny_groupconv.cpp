// course6_conv: the committed PyTorch fixture models/fixtures/tiny_groupconv
// (a grouped conv, a strided dilated depthwise conv and a 1x1 conv without
// bias) against PyTorch's output. The operators are read with the PNNX reader
// and run in file order here, so this test needs no other lab.
#include <gtest/gtest.h>

#include "kuiper/layers/convolution.hpp"
#include "kuiper/npy.hpp"
#include "kuiper/pnnx.hpp"

namespace kuiper {
namespace {

const std::string kFixture = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/tiny_groupconv";

uint32_t Int(const pnnx::Operator& op, const std::string& key) {
  return static_cast<uint32_t>(op.params.at(key).i);
}

uint32_t At(const pnnx::Operator& op, const std::string& key, int axis) {
  return static_cast<uint32_t>(op.params.at(key).ai.at(axis));
}

ConvolutionLayer MakeLayer(const pnnx::Operator& op) {
  ConvParams p;
  p.in_channels = Int(op, "in_channels");
  p.out_channels = Int(op, "out_channels");
  p.groups = Int(op, "groups");
  p.kernel_h = At(op, "kernel_size", 0), p.kernel_w = At(op, "kernel_size", 1);
  p.stride_h = At(op, "stride", 0), p.stride_w = At(op, "stride", 1);
  p.padding_h = At(op, "padding", 0), p.padding_w = At(op, "padding", 1);
  p.dilation_h = At(op, "dilation", 0), p.dilation_w = At(op, "dilation", 1);
  const bool bias = op.params.at("bias").b;
  return ConvolutionLayer(op.name, p, op.attrs.at("weight").ToFloat(),
                          bias ? op.attrs.at("bias").ToFloat() : std::vector<float>{});
}

TEST(TinyGroupConv, MatchesPyTorch) {
  const pnnx::Graph graph = pnnx::Load(kFixture + ".pnnx.param", kFixture + ".pnnx.bin");
  std::vector<sftensor> batch = NpyToBatch(LoadNpy(kFixture + ".input.npy"));
  int convolutions = 0;
  for (const pnnx::Operator& op : graph.operators) {  // the file is in execution order
    if (op.type != "nn.Conv2d") continue;
    ConvolutionLayer layer = MakeLayer(op);
    std::vector<sftensor> outputs(batch.size());
    ASSERT_EQ(layer.Forward(batch, outputs), InferStatus::kInferSuccess) << op.name;
    batch = outputs;
    ++convolutions;
  }
  EXPECT_EQ(convolutions, 3);
  const std::vector<sftensor> expected = NpyToBatch(LoadNpy(kFixture + ".output.npy"));
  ASSERT_EQ(batch.size(), expected.size());
  for (size_t n = 0; n < batch.size(); ++n) {
    ASSERT_EQ(batch[n]->shapes(), expected[n]->shapes());
    EXPECT_LE(arma::abs(batch[n]->data() - expected[n]->data()).max(), 1e-4f);
  }
}

}  // namespace
}  // namespace kuiper
