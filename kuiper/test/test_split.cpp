// The operators with several outputs (torch.split, torch.chunk,
// torch.tensor_split; kuiper/src/layer/split.cpp): how each sizes its pieces,
// that piece j of every batch item lands in output operand j (Layer::Forward
// hands a layer the slots of all its outputs, one operand after another), and
// that the graph accepts an operator line with several outputs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <numeric>

#include "kuiper/graph.hpp"
#include "kuiper/layer.hpp"
#include "operand_test_util.hpp"

namespace kuiper::test {
namespace {

// An operator of `type` with one input operand holding `batch` and `outputs`
// output operands, as RuntimeGraph::Build leaves them (one empty slot per item).
class SplitOperator {
 public:
  SplitOperator(const std::string& type, std::map<std::string, RuntimeParameter> params,
                size_t outputs, std::vector<sftensor> batch)
      : outputs_(outputs) {
    op_.type = type;
    op_.name = "split_under_test";
    op_.params = std::move(params);
    input_.datas = std::move(batch);
    op_.input_operands.push_back(&input_);
    for (RuntimeOperand& output : outputs_) {
      output.datas.assign(input_.datas.size(), nullptr);
      op_.output_operands.push_back(&output);
    }
    op_.output_operand = op_.output_operands.front();
  }
  std::unique_ptr<Layer> Create() { return LayerRegisterer::CreateLayer(op_); }
  InferStatus Run() {
    layer_ = Create();
    layer_->set_runtime_operator(&op_);
    return layer_->Forward();
  }
  // Output operand j, item i: its shape and row-major values.
  std::vector<uint32_t> shape(size_t j, size_t i = 0) const {
    return outputs_[j].datas.at(i)->raw_shapes();
  }
  std::vector<float> values(size_t j, size_t i = 0) const {
    return outputs_[j].datas.at(i)->values(/*row_major=*/true);
  }

 private:
  RuntimeOperand input_;
  std::vector<RuntimeOperand> outputs_;
  RuntimeOperator op_;
  std::unique_ptr<Layer> layer_;
};

// A tensor of `shape` holding first, first+1, ... in row-major order.
sftensor Iota(const std::vector<uint32_t>& shape, float first = 0) {
  sftensor t = TensorCreate(shape);
  std::vector<float> values(t->size());
  std::iota(values.begin(), values.end(), first);
  t->Fill(values, /*row_major=*/true);
  return t;
}

using Shape = std::vector<uint32_t>;
using Values = std::vector<float>;

TEST(TensorSplit, IndicesCutTheLastDimensionAtEachIndex) {
  // torch.arange(10.).reshape(1,2,5).tensor_split((1,3), dim=-1)
  SplitOperator op("torch.tensor_split", {{"dim", -1}, {"indices", std::vector<int>{1, 3}}}, 3,
                   {Iota({2, 5})});
  ASSERT_EQ(op.Run(), InferStatus::kInferSuccess);
  EXPECT_EQ(op.shape(0), (Shape{2, 1}));
  EXPECT_EQ(op.values(0), (Values{0, 5}));
  EXPECT_EQ(op.values(1), (Values{1, 2, 6, 7}));
  EXPECT_EQ(op.values(2), (Values{3, 4, 8, 9}));
}

TEST(TensorSplit, SectionsGiveTheFirstPiecesOneMore) {
  // torch.arange(7.).reshape(1,7).tensor_split(3, dim=1): sizes 3, 2, 2
  SplitOperator op("torch.tensor_split", {{"dim", 1}, {"sections", 3}}, 3, {Iota({7})});
  ASSERT_EQ(op.Run(), InferStatus::kInferSuccess);
  EXPECT_EQ(op.values(0), (Values{0, 1, 2}));
  EXPECT_EQ(op.values(1), (Values{3, 4}));
  EXPECT_EQ(op.values(2), (Values{5, 6}));
}

TEST(TensorSplit, NegativeIndicesCountFromTheEnd) {
  // torch.arange(6.).reshape(1,6).tensor_split((2,-1), dim=1): [0,2), [2,5), [5,6)
  SplitOperator op("torch.tensor_split", {{"dim", 1}, {"indices", std::vector<int>{2, -1}}}, 3,
                   {Iota({6})});
  ASSERT_EQ(op.Run(), InferStatus::kInferSuccess);
  EXPECT_EQ(op.values(0), (Values{0, 1}));
  EXPECT_EQ(op.values(1), (Values{2, 3, 4}));
  EXPECT_EQ(op.values(2), (Values{5}));
}

TEST(Split, SizesCutTheChannels) {
  // torch.arange(6.).reshape(1,3,1,2).split((1,2), dim=1)
  SplitOperator op("torch.split", {{"dim", 1}, {"split_size_or_sections", std::vector<int>{1, 2}}},
                   2, {Iota({3, 1, 2})});
  ASSERT_EQ(op.Run(), InferStatus::kInferSuccess);
  EXPECT_EQ(op.shape(0), (Shape{1, 1, 2}));
  EXPECT_EQ(op.values(0), (Values{0, 1}));
  EXPECT_EQ(op.shape(1), (Shape{2, 1, 2}));
  EXPECT_EQ(op.values(1), (Values{2, 3, 4, 5}));
}

TEST(Split, AnIntSizeLeavesTheRemainderLast) {
  // torch.arange(6.).reshape(1,1,3,2).split(2, dim=2): rows 0-1, then row 2
  SplitOperator op("torch.split", {{"dim", 2}, {"split_size_or_sections", 2}}, 2,
                   {Iota({1, 3, 2})});
  ASSERT_EQ(op.Run(), InferStatus::kInferSuccess);
  EXPECT_EQ(op.shape(0), (Shape{1, 2, 2}));
  EXPECT_EQ(op.values(0), (Values{0, 1, 2, 3}));
  EXPECT_EQ(op.shape(1), (Shape{1, 1, 2}));
  EXPECT_EQ(op.values(1), (Values{4, 5}));
}

TEST(Chunk, PiecesAreTheCeilingOfSizeOverChunks) {
  // torch.arange(5.).reshape(1,5).chunk(2, dim=-1): sizes 3, 2
  SplitOperator op("torch.chunk", {{"dim", -1}, {"chunks", 2}}, 2, {Iota({5})});
  ASSERT_EQ(op.Run(), InferStatus::kInferSuccess);
  EXPECT_EQ(op.values(0), (Values{0, 1, 2}));
  EXPECT_EQ(op.values(1), (Values{3, 4}));
}

TEST(Split, EveryBatchItemGoesToTheSameOutputOperands) {
  // Two items of (2,2): item 0 holds 0..3, item 1 holds 10..13; split rows in two.
  SplitOperator op("torch.split", {{"dim", 1}, {"split_size_or_sections", 1}}, 2,
                   {Iota({2, 2}), Iota({2, 2}, 10)});
  ASSERT_EQ(op.Run(), InferStatus::kInferSuccess);
  EXPECT_EQ(op.values(0, 0), (Values{0, 1}));
  EXPECT_EQ(op.values(0, 1), (Values{10, 11}));
  EXPECT_EQ(op.values(1, 0), (Values{2, 3}));
  EXPECT_EQ(op.values(1, 1), (Values{12, 13}));
}

TEST(Split, MorePiecesThanOutputsIsAShapeError) {
  // split(1) of 3 rows makes 3 pieces; the operator has 2 outputs.
  SplitOperator op("torch.split", {{"dim", 1}, {"split_size_or_sections", 1}}, 2, {Iota({3})});
  EXPECT_EQ(op.Run(), InferStatus::kInferFailedShapeError);
}

TEST(TensorSplit, AnEmptyPieceIsAShapeError) {
  // tensor_split(3) of 2 elements: PyTorch gives sizes 1, 1, 0; an engine tensor cannot be empty.
  SplitOperator op("torch.tensor_split", {{"dim", 1}, {"sections", 3}}, 3, {Iota({2})});
  EXPECT_EQ(op.Run(), InferStatus::kInferFailedShapeError);
}

TEST(Split, TheBatchDimensionIsRefusedNamingTheOperator) {
  SplitOperator op("torch.split", {{"dim", 0}, {"split_size_or_sections", 1}}, 2, {Iota({2})});
  try {
    op.Create();
    FAIL() << "expected LayerError";
  } catch (const LayerError& e) {
    EXPECT_NE(std::string(e.what()).find("split_under_test"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dim=0"), std::string::npos) << e.what();
  }
}

TEST(TensorSplit, IndicesThatDoNotMatchTheOutputsAreRefused) {
  SplitOperator op("torch.tensor_split", {{"dim", 1}, {"indices", std::vector<int>{1}}}, 3,
                   {Iota({4})});
  EXPECT_THROW(op.Create(), LayerError);
}

TEST(RuntimeGraph, AnOperatorWithThreeOutputsFeedsEachConsumer) {
  // As the real pnnx writes YOLOv5's tensor_split: one line, three output operands.
  const std::string text =
      "7767517\n6 7\n"
      "pnnx.Input in 0 1 0 #0=(1,6)f32\n"
      "torch.tensor_split split 1 3 0 1 2 3 dim=1 sections=3\n"
      "nn.ReLU r1 1 1 1 4\n"
      "nn.ReLU r2 1 1 2 5\n"
      "torch.cat cat 3 1 4 5 3 6 dim=1\n"
      "pnnx.Output out 1 0 6\n";
  RuntimeGraph graph(pnnx::ParseParam(text, "split.pnnx.param"), "split.pnnx.param");
  ASSERT_NO_THROW(graph.InitTopology());
  const RuntimeOperator* split = graph.FindOperator("split");
  ASSERT_EQ(split->output_operands.size(), 3u);
  EXPECT_EQ(split->output_operand, split->output_operands[0]);
  std::vector<std::string> consumers;
  for (const RuntimeOperator* next : split->output_operators) consumers.push_back(next->name);
  EXPECT_EQ(consumers, (std::vector<std::string>{"r1", "r2", "cat"}));
  EXPECT_EQ(graph.FindOperator("cat")->input_operators.size(), 3u);
}

}  // namespace
}  // namespace kuiper::test
