// The reduction, axis and index-copy layers (kuiper/src/layer/reduce.cpp,
// axis_ops.cpp, conv_transpose.cpp) as a PNNX file would give them: PyTorch
// parameter names, `dim` counted with the batch as dimension 0. Expected
// values by hand from row-major 0, 1, 2, ... of small items.
#include <gtest/gtest.h>

#include <cmath>

#include "kuiper/layer.hpp"
#include "operand_test_util.hpp"

namespace kuiper::test {
namespace {

// Runs a fresh layer of `op` on `items` (a batch); returns the output items.
std::vector<sftensor> RunAxisLayer(const RuntimeOperator& op, const std::vector<sftensor>& items) {
  std::vector<sftensor> outputs(items.size());
  EXPECT_EQ(LayerRegisterer::CreateLayer(op)->Forward(items, outputs), InferStatus::kInferSuccess);
  return outputs;
}

RuntimeOperator AxisOp(const std::string& type) {
  RuntimeOperator op;
  op.type = type;
  op.name = "op_under_test";
  return op;
}

std::vector<float> Counting(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST(ReduceLayer, SumOverTwoDimsKeepsThemAsOnesWithKeepdim) {
  RuntimeOperator op = AxisOp("torch.sum");
  op.params["dim"] = std::vector<int>{1, -1};  // of (batch, 2, 3, 4): dims 1 and 3
  op.params["keepdim"] = true;
  const auto out = RunAxisLayer(op, {RowMajorTensor({2, 3, 4}, Counting(24))});
  ASSERT_EQ(out[0]->raw_shapes(), (std::vector<uint32_t>{1, 3, 1}));
  // row r of plane p holds 12p + 4r + (0..3); summed over p and the 4 columns:
  // (0+12)*4 + 2*(4r*4) + 2*6 = 60 + 32r
  EXPECT_EQ(out[0]->values(), (std::vector<float>{60, 92, 124}));
}

TEST(ReduceLayer, EveryReductionOfOneRow) {
  const std::vector<std::pair<std::string, float>> cases = {
      {"torch.sum", 3},  {"torch.mean", 0.75f}, {"torch.prod", -6},
      {"torch.amax", 3}, {"torch.amin", -2},    {"torch.norm", std::sqrt(15.f)}};
  for (const auto& [type, want] : cases) {
    RuntimeOperator op = AxisOp(type);
    op.params["dim"] = std::vector<int>{1};
    const auto out = RunAxisLayer(op, {RowMajorTensor({4}, {1, -2, 3, 1})});
    ASSERT_EQ(out[0]->size(), 1u) << type;
    EXPECT_NEAR(out[0]->index(0), want, 1e-6f) << type;
  }
}

TEST(ReduceLayer, LogSumExpStaysFiniteForHugeValues) {
  RuntimeOperator op = AxisOp("torch.logsumexp");
  op.params["dim"] = 1;
  const auto out = RunAxisLayer(op, {RowMajorTensor({2}, {1000, 1000})});
  EXPECT_NEAR(out[0]->index(0), 1000 + std::log(2.f), 1e-3f);
}

TEST(ReduceLayer, DimZeroIsRefusedWhenCreated) {
  RuntimeOperator op = AxisOp("torch.sum");
  op.params["dim"] = std::vector<int>{0, 1};
  ExpectCreationError(op, "the batch");
}

TEST(ReduceLayer, ArgmaxAndArgminGiveTheIndexAsAFloat) {
  RuntimeOperator op = AxisOp("torch.argmax");
  op.params["dim"] = 2;
  op.params["keepdim"] = false;
  const auto out = RunAxisLayer(op, {RowMajorTensor({2, 3}, {0, 5, 1, 7, 2, 7})});
  EXPECT_EQ(out[0]->values(), (std::vector<float>{1, 0}));  // ties: the first index
  op.type = "torch.argmin";
  const auto low = RunAxisLayer(op, {RowMajorTensor({2, 3}, {0, 5, 1, 7, 2, 7})});
  EXPECT_EQ(low[0]->values(), (std::vector<float>{0, 1}));
}

TEST(AxisLayers, CumsumRunsAlongTheRows) {
  RuntimeOperator op = AxisOp("torch.cumsum");
  op.params["dim"] = 1;
  const auto out = RunAxisLayer(op, {RowMajorTensor({3, 2}, Counting(6))});
  EXPECT_EQ(out[0]->values(), (std::vector<float>{0, 1, 2, 4, 6, 9}));
}

TEST(AxisLayers, TriuWithANegativeDiagonalKeepsOneBandBelow) {
  RuntimeOperator op = AxisOp("torch.triu");
  op.params["diagonal"] = -1;
  const auto out = RunAxisLayer(op, {RowMajorTensor({3, 3}, Counting(9))});
  EXPECT_EQ(out[0]->values(), (std::vector<float>{0, 1, 2, 3, 4, 5, 0, 7, 8}));
}

TEST(AxisLayers, IndexSelectRepeatsAndReordersRows) {
  RuntimeOperator op = AxisOp("torch.index_select");
  op.params["dim"] = 1;
  op.params["index"] = std::vector<int>{2, 0, -1};
  const auto out = RunAxisLayer(op, {RowMajorTensor({3, 2}, Counting(6))});
  ASSERT_EQ(out[0]->raw_shapes(), (std::vector<uint32_t>{3, 2}));
  EXPECT_EQ(out[0]->values(), (std::vector<float>{4, 5, 0, 1, 4, 5}));
}

TEST(AxisLayers, ExpandBroadcastsOnesAndRepeatTiles) {
  RuntimeOperator expand = AxisOp("Tensor.expand");
  expand.params["shape"] = std::vector<int>{-1, 2, 3};
  EXPECT_EQ(RunAxisLayer(expand, {RowMajorTensor({1, 3}, {1, 2, 3})})[0]->values(),
            (std::vector<float>{1, 2, 3, 1, 2, 3}));
  RuntimeOperator repeat = AxisOp("Tensor.repeat");
  repeat.params["sizes"] = std::vector<int>{1, 1, 2};
  EXPECT_EQ(RunAxisLayer(repeat, {RowMajorTensor({2, 2}, Counting(4))})[0]->values(),
            (std::vector<float>{0, 1, 0, 1, 2, 3, 2, 3}));
}

TEST(AxisLayers, PadReflectsAndReplicatesInPyTorchOrder) {
  RuntimeOperator op = AxisOp("F.pad");
  op.params["pad"] = std::vector<int>{1, 0, 0, 1};  // last dim (1 before), then rows (1 after)
  op.params["mode"] = std::string("reflect");
  EXPECT_EQ(RunAxisLayer(op, {RowMajorTensor({2, 2}, Counting(4))})[0]->values(),
            (std::vector<float>{1, 0, 1, 3, 2, 3, 1, 0, 1}));
  op.params["mode"] = std::string("replicate");
  EXPECT_EQ(RunAxisLayer(op, {RowMajorTensor({2, 2}, Counting(4))})[0]->values(),
            (std::vector<float>{0, 0, 1, 2, 2, 3, 2, 2, 3}));
}

TEST(AxisLayers, ConvTransposeWithAWrongWeightShapeNamesTheOperator) {
  RuntimeOperator op = AxisOp("nn.ConvTranspose2d");
  op.params["in_channels"] = 2;
  op.params["out_channels"] = 1;
  op.params["kernel_size"] = std::vector<int>{2, 2};
  op.attribute["weight"] =
      pnnx::Attribute{pnnx::DataType::kF32, {1, 1, 2, 2}, std::vector<char>(16, 0)};
  ExpectCreationError(op, "weight has shape (1,1,2,2), expected (2,1,2,2)");
}

}  // namespace
}  // namespace kuiper::test
