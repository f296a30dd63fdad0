// Core tests of RuntimeGraph that need no lab: loading the topology, the
// depth-first order, and what Build and Forward report.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/layer.hpp"

namespace kuiper {
namespace {

const std::string kSource = KUIPER_SOURCE_DIR;

void ExpectValidOrder(const RuntimeGraph& graph, const std::vector<RuntimeOperator*>& order) {
  ASSERT_EQ(order.size(), graph.operators().size());
  std::map<const RuntimeOperator*, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_TRUE(position.emplace(order[i], i).second) << order[i]->name << " appears twice";
  }
  for (const auto& op : graph.operators()) {
    for (const RuntimeOperator* consumer : op->output_operators) {
      EXPECT_LT(position.at(op.get()), position.at(consumer))
          << op->name << " -> " << consumer->name;
    }
  }
}

// pnnx.Input, `length` nn.ReLU operators one after another, pnnx.Output.
pnnx::Graph Chain(int length) {
  std::string text = fmt::format("7767517\n{} {}\npnnx.Input in 0 1 0\n", length + 2, length + 1);
  for (int i = 0; i < length; ++i) text += fmt::format("nn.ReLU relu{} 1 1 {} {}\n", i, i, i + 1);
  text += fmt::format("pnnx.Output out 1 0 {}\n", length);
  return pnnx::ParseParam(text, "chain.pnnx.param");
}

// The operators' file positions in `order`.
std::vector<int> Indices(const std::vector<RuntimeOperator*>& order) {
  std::vector<int> indices;
  for (const RuntimeOperator* op : order) indices.push_back(op->index);
  return indices;
}

class ModelTopology : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelTopology, ReverseTopoIsAValidOrderFromInputToOutput) {
  RuntimeGraph graph(kSource + "/models/fixtures/" + GetParam() + ".pnnx.param", "");
  graph.InitTopology();
  const auto order = graph.ReverseTopo();
  ExpectValidOrder(graph, order);
  EXPECT_EQ(order.front()->type, "pnnx.Input");
  EXPECT_EQ(order.back()->type, "pnnx.Output");
}

TEST_P(ModelTopology, EdgesFollowTheOperands) {
  RuntimeGraph graph(kSource + "/models/fixtures/" + GetParam() + ".pnnx.param", "");
  graph.InitTopology();
  for (const auto& op : graph.operators()) {
    for (const RuntimeOperator* producer : op->input_operators) {
      bool feeds = false;
      for (const RuntimeOperand* operand : op->input_operands) {
        for (const RuntimeOperand* output : producer->output_operands) {
          feeds = feeds || operand == output;
        }
      }
      EXPECT_TRUE(feeds) << producer->name << " is listed as an input of " << op->name;
    }
  }
  EXPECT_EQ(graph.input_operators().size(), 1u);
  EXPECT_EQ(graph.output_operators().size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Core, ModelTopology, ::testing::Values("resnet18", "yolov5s"));

TEST(RuntimeGraph, ResNet18HasTheExpectedOperatorCounts) {
  RuntimeGraph graph(kSource + "/models/fixtures/resnet18.pnnx.param", "");
  graph.InitTopology();
  std::map<std::string, int> counts;
  for (const auto& op : graph.operators()) ++counts[op->type];
  // torchvision resnet18 with BatchNorm folded: 20 convolutions (17 3x3/7x7 +
  // 3 downsample 1x1), 17 ReLUs, 8 residual additions.
  EXPECT_EQ(counts["nn.Conv2d"], 20);
  EXPECT_EQ(counts["nn.ReLU"], 17);
  EXPECT_EQ(counts["pnnx.Expression"], 8);
  EXPECT_EQ(counts["nn.Linear"], 1);
  EXPECT_EQ(counts["nn.BatchNorm2d"], 0);
}

// A linear weight declared (2,3)f32, holding `bytes` bytes.
RuntimeOperator LinearWithWeightBytes(size_t bytes) {
  RuntimeOperator op;
  op.type = "nn.Linear";
  op.name = "linear";
  RuntimeAttribute& weight = op.attribute["weight"];
  weight.type = pnnx::DataType::kF32;
  weight.shape = {2, 3};
  weight.data.assign(bytes, 0);
  return op;
}

TEST(RuntimeOperator, AttributeHoldingItsDeclaredBytesIsGiven) {
  const RuntimeOperator op = LinearWithWeightBytes(24);
  EXPECT_EQ(op.attr("weight").data.size(), 24u);
}

// A graph loaded without its .pnnx.bin: the layers read past the empty data
// (a segmentation fault in nn.Linear, found by fuzz/pnnx_param_fuzzer.cpp).
TEST(RuntimeOperator, AttributeWithoutItsDataIsALayerErrorNamingIt) {
  const RuntimeOperator op = LinearWithWeightBytes(0);
  try {
    op.attr("weight");
    FAIL() << "no LayerError";
  } catch (const LayerError& e) {
    EXPECT_EQ(std::string(e.what()),
              "operator 'linear' (nn.Linear): attribute 'weight' of shape (2,3) f32 holds 0 "
              "bytes, expected 24 (is the .pnnx.bin loaded?)");
  }
}

TEST(RuntimeOperator, AttributeWithTooManyBytesIsALayerError) {
  const RuntimeOperator op = LinearWithWeightBytes(28);
  EXPECT_THROW(op.attr("weight"), LayerError);
}

TEST(RuntimeGraph, DepthFirstOrderReportsACycle) {
  RuntimeGraph graph(kSource + "/kuiper/test/data/graph/cycle_only.pnnx.param", "");
  graph.InitTopology();
  EXPECT_THROW(graph.ReverseTopo(), GraphError);
}

TEST(RuntimeGraph, BuildListsEveryUnknownLayerTypeAtOnce) {
  RuntimeGraph graph(kSource + "/kuiper/test/data/graph/unknown_layers.pnnx.param", "");
  graph.InitTopology();
  try {
    graph.Build();
    FAIL() << "Build must refuse unknown layer types";
  } catch (const LayerError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("2 type(s)"), std::string::npos) << what;
    EXPECT_NE(what.find("made.Up (operators first, third)"), std::string::npos) << what;
    EXPECT_NE(what.find("also.Unknown (operators second)"), std::string::npos) << what;
  }
}

TEST(RuntimeGraph, ForwardBeforeBuildThrows) {
  RuntimeGraph graph(kSource + "/kuiper/test/data/graph/unknown_layers.pnnx.param", "");
  graph.InitTopology();
  EXPECT_THROW(graph.Forward(std::vector<sftensor>{TensorCreate({2, 3, 4})}), GraphError);
}

TEST(RuntimeGraph, MissingFileIsAParseError) {
  RuntimeGraph graph(kSource + "/no/such/model.pnnx.param", "");
  EXPECT_THROW(graph.InitTopology(), ParseError);
}

TEST(BatchItemShape, DropsTheBatchDimension) {
  EXPECT_EQ(BatchItemShape({1, 3, 224, 224}), std::vector<uint32_t>({3, 224, 224}));
  EXPECT_EQ(BatchItemShape({4, 1000}), std::vector<uint32_t>({1000}));
  EXPECT_EQ(BatchItemShape({1, 25200, 85}), std::vector<uint32_t>({25200, 85}));
  EXPECT_THROW(BatchItemShape({1, -1, 4}), ShapeError);
  EXPECT_EQ(BatchItemShape({1, 3, 80, 80, 85}), std::vector<uint32_t>({3, 80, 80, 85}));
  EXPECT_THROW(BatchItemShape({1, 1, 1, 1, 1, 1, 1, 1, 2}), ShapeError);  // 9-D
  EXPECT_THROW(BatchItemShape({8}), ShapeError);
}

TEST(LayerRegisterer, UnknownTypeNamesTypeAndOperator) {
  RuntimeOperator op;
  op.type = "nn.DoesNotExist";
  op.name = "mystery";
  try {
    LayerRegisterer::CreateLayer(op);
    FAIL();
  } catch (const LayerError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'mystery'"), std::string::npos) << what;
    EXPECT_NE(what.find("'nn.DoesNotExist'"), std::string::npos) << what;
  }
}

// The depth-first search keeps its own stack: recursing once per operator, it
// would need 100002 frames here.
TEST(RuntimeGraph, ReverseTopoOrdersAChainOfAHundredThousandOperators) {
  RuntimeGraph graph(Chain(100000), "chain.pnnx.param");
  graph.InitTopology();
  std::vector<int> file_order(100002);
  std::iota(file_order.begin(), file_order.end(), 0);
  EXPECT_EQ(Indices(graph.ReverseTopo()), file_order);
}

}  // namespace
}  // namespace kuiper
