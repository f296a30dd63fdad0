// course4_topo: RuntimeGraph::KahnTopoSort orders operators so that every
// producer runs before its consumers, deterministically, and reports cycles.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"

namespace kuiper {
namespace {

const std::string kSource = KUIPER_SOURCE_DIR;

std::vector<std::string> Names(const std::vector<RuntimeOperator*>& order) {
  std::vector<std::string> names;
  for (const RuntimeOperator* op : order) names.push_back(op->name);
  return names;
}

// Checks every property a topological order must have, independently of how
// it was computed.
void ExpectValidOrder(const RuntimeGraph& graph, const std::vector<RuntimeOperator*>& order) {
  ASSERT_EQ(order.size(), graph.operators().size()) << "every operator appears";
  std::map<const RuntimeOperator*, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_TRUE(position.emplace(order[i], i).second) << order[i]->name << " appears twice";
  }
  for (const auto& op : graph.operators()) {
    for (const RuntimeOperator* consumer : op->output_operators) {
      EXPECT_LT(position.at(op.get()), position.at(consumer))
          << op->name << " must come before its consumer " << consumer->name;
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

class ModelGraphs : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelGraphs, EveryProducerComesBeforeItsConsumers) {
  RuntimeGraph graph(kSource + "/models/fixtures/" + GetParam() + ".pnnx.param", "");
  graph.InitTopology();
  ExpectValidOrder(graph, graph.KahnTopoSort());
}

TEST_P(ModelGraphs, InputFirstAndOutputLast) {
  RuntimeGraph graph(kSource + "/models/fixtures/" + GetParam() + ".pnnx.param", "");
  graph.InitTopology();
  const auto order = graph.KahnTopoSort();
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.front()->type, "pnnx.Input");
  EXPECT_EQ(order.back()->type, "pnnx.Output");
}

TEST_P(ModelGraphs, OrderIsDeterministic) {
  RuntimeGraph first(kSource + "/models/fixtures/" + GetParam() + ".pnnx.param", "");
  RuntimeGraph second(kSource + "/models/fixtures/" + GetParam() + ".pnnx.param", "");
  first.InitTopology();
  second.InitTopology();
  EXPECT_EQ(Names(first.KahnTopoSort()), Names(second.KahnTopoSort()));
  EXPECT_EQ(Names(first.KahnTopoSort()), Names(first.KahnTopoSort()));
}

TEST_P(ModelGraphs, FileOrderIsKeptWhenItIsAlreadyTopological) {
  // PNNX writes operators in a topological order; ties broken by position
  // must reproduce it exactly.
  RuntimeGraph graph(kSource + "/models/fixtures/" + GetParam() + ".pnnx.param", "");
  graph.InitTopology();
  std::vector<std::string> file_order;
  for (const auto& op : graph.operators()) file_order.push_back(op->name);
  EXPECT_EQ(Names(graph.KahnTopoSort()), file_order);
}

INSTANTIATE_TEST_SUITE_P(Course4, ModelGraphs, ::testing::Values("resnet18", "yolov5s"));

TEST(KahnTopoSort, ShuffledFileIsOrderedByDependenciesThenPosition) {
  RuntimeGraph graph(kSource + "/course4_topo/test/data/shuffled.pnnx.param", "");
  graph.InitTopology();
  // input has in-degree 0; then right (line 3) and left (line 4) become ready
  // together and right comes first by position; add needs both; output last.
  EXPECT_EQ(Names(graph.KahnTopoSort()),
            std::vector<std::string>({"input", "right", "left", "add", "output"}));
}

TEST(KahnTopoSort, CycleIsReportedWithAnOperatorOnIt) {
  RuntimeGraph graph(kSource + "/course4_topo/test/data/cycle.pnnx.param", "");
  graph.InitTopology();
  try {
    graph.KahnTopoSort();
    FAIL() << "a cyclic graph must throw GraphError";
  } catch (const GraphError& e) {
    const std::string what = e.what();
    // join -> loop_a -> loop_b -> join is the cycle; output hangs behind it.
    const bool names_cycle_member = what.find("'join'") != std::string::npos ||
                                    what.find("'loop_a'") != std::string::npos ||
                                    what.find("'loop_b'") != std::string::npos;
    EXPECT_TRUE(names_cycle_member) << what;
    EXPECT_NE(what.find("cycle"), std::string::npos) << what;
  }
}

TEST(KahnTopoSort, DisconnectedOperatorIsReportedWhenTheGraphLoads) {
  RuntimeGraph graph(kSource + "/course4_topo/test/data/disconnected.pnnx.param", "");
  try {
    graph.InitTopology();
    FAIL() << "an operator whose output is never used must be reported";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("'forgotten'"), std::string::npos) << e.what();
  }
}

TEST(KahnTopoSort, AgreesWithTheDepthFirstOrderOnValidity) {
  RuntimeGraph graph(kSource + "/models/fixtures/yolov5s.pnnx.param", "");
  graph.InitTopology();
  const auto kahn = graph.KahnTopoSort();
  const auto dfs = graph.ReverseTopo();
  ExpectValidOrder(graph, kahn);
  ExpectValidOrder(graph, dfs);
  EXPECT_EQ(std::set<RuntimeOperator*>(kahn.begin(), kahn.end()),
            std::set<RuntimeOperator*>(dfs.begin(), dfs.end()));
}

// A long chain must not overflow the stack (a recursive search would need
// one frame per operator).
TEST(KahnTopoSort, OrdersAChainOfAHundredThousandOperators) {
  RuntimeGraph graph(Chain(100000), "chain.pnnx.param");
  graph.InitTopology();
  std::vector<int> file_order(100002);
  std::iota(file_order.begin(), file_order.end(), 0);
  EXPECT_EQ(Indices(graph.KahnTopoSort()), file_order);
}

}  // namespace
}  // namespace kuiper
