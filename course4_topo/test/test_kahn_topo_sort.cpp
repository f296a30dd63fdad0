// course4_topo: RuntimeGraph::KahnTopoSort orders operators so that every
// producer runs before its consumers, deterministically, and reports cycles.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
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

// A graph written inline, in .pnnx.param text (magic and counts included).
pnnx::Graph Inline(const std::string& text) { return pnnx::ParseParam(text, "inline.pnnx.param"); }

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
            std::vector<std::string>({"input", "right", "left", "add", "output"}))
      << "see README \"Determinism\": ties go to the smallest index";
}

TEST(KahnTopoSort, ReadyOperatorWithTheSmallestIndexGoesFirstEvenIfItBecameReadyLast) {
  // After `input`, b (index 2) and c (index 3) are ready. Emitting b makes a
  // (index 1) ready: a must now go before c, although c has waited longer.
  // A first-in first-out queue would give input, b, c, a, d, output.
  RuntimeGraph graph(Inline("7767517\n6 5\n"
                            "pnnx.Input input 0 1 0\n"
                            "nn.ReLU a 1 1 2 1\n"
                            "nn.ReLU b 1 1 0 2\n"
                            "nn.ReLU c 1 1 0 3\n"
                            "pnnx.Expression d 2 1 1 3 4 expr=add(@0,@1)\n"
                            "pnnx.Output output 1 0 4\n"),
                     "late.pnnx.param");
  graph.InitTopology();
  EXPECT_EQ(Names(graph.KahnTopoSort()),
            std::vector<std::string>({"input", "b", "a", "c", "d", "output"}))
      << "see README \"Determinism\": always the ready operator of smallest index, not the "
         "one that became ready first";
}

TEST(KahnTopoSort, EveryOperatorWithoutProducersStartsReady) {
  // Two inputs, the second one listed after an operator that reads the first.
  RuntimeGraph graph(Inline("7767517\n5 4\n"
                            "pnnx.Input x 0 1 0\n"
                            "nn.ReLU relu 1 1 0 1\n"
                            "pnnx.Input y 0 1 2\n"
                            "pnnx.Expression add 2 1 1 2 3 expr=add(@0,@1)\n"
                            "pnnx.Output output 1 0 3\n"),
                     "two_inputs.pnnx.param");
  graph.InitTopology();
  EXPECT_EQ(Names(graph.KahnTopoSort()),
            std::vector<std::string>({"x", "relu", "y", "add", "output"}))
      << "see README \"The in-degree invariant\": every operator of in-degree 0 is ready at "
         "the start";
}

TEST(KahnTopoSort, AnOperatorReadingOneProducerTwiceIsNotACycle) {
  // square reads operand 1 twice: it has two input operands but one producer.
  RuntimeGraph graph(Inline("7767517\n4 3\n"
                            "pnnx.Input input 0 1 0\n"
                            "nn.ReLU relu 1 1 0 1\n"
                            "pnnx.Expression square 2 1 1 1 2 expr=mul(@0,@1)\n"
                            "pnnx.Output output 1 0 2\n"),
                     "square.pnnx.param");
  graph.InitTopology();
  ASSERT_EQ(graph.operators()[2]->input_operands.size(), 2u);
  ASSERT_EQ(graph.operators()[2]->input_operators.size(), 1u);
  std::vector<std::string> names;
  try {
    names = Names(graph.KahnTopoSort());
  } catch (const GraphError& e) {
    FAIL() << e.what() << "\nsee README \"The in-degree invariant\": the in-degree counts "
           << "producers (input_operators), not input operands";
  }
  EXPECT_EQ(names, std::vector<std::string>({"input", "relu", "square", "output"}));
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
    EXPECT_TRUE(names_cycle_member) << what << "\nsee README \"Reporting a cycle\"";
    EXPECT_NE(what.find("cycle"), std::string::npos) << what;
  }
}

TEST(KahnTopoSort, CycleReportNamesAnOperatorOnTheCycleNotOneBehindIt) {
  // The cycle is join -> loop_a -> loop_b -> join. `early` (listed before it)
  // and `output` (listed after it) only hang behind it, so neither the first
  // nor the last operator left over is on the cycle.
  RuntimeGraph graph(Inline("7767517\n6 5\n"
                            "pnnx.Input input 0 1 0\n"
                            "nn.ReLU early 1 1 2 4\n"
                            "pnnx.Expression join 2 1 0 3 1 expr=add(@0,@1)\n"
                            "nn.ReLU loop_a 1 1 1 2\n"
                            "nn.ReLU loop_b 1 1 2 3\n"
                            "pnnx.Output output 1 0 4\n"),
                     "hidden_cycle.pnnx.param");
  graph.InitTopology();
  try {
    graph.KahnTopoSort();
    FAIL() << "a cyclic graph must throw GraphError";
  } catch (const GraphError& e) {
    const std::string what = e.what();
    const bool names_cycle_member = what.find("'join'") != std::string::npos ||
                                    what.find("'loop_a'") != std::string::npos ||
                                    what.find("'loop_b'") != std::string::npos;
    EXPECT_TRUE(names_cycle_member)
        << what << "\nexpected 'join', 'loop_a' or 'loop_b': 'early' and 'output' only wait "
        << "behind the cycle; see README \"Reporting a cycle\"";
    EXPECT_EQ(what.find("'early'"), std::string::npos) << what;
    EXPECT_EQ(what.find("'output'"), std::string::npos) << what;
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

// A long chain: each operator becomes ready only when the one before it is
// emitted. An O(V + E) sort takes milliseconds; a sort that searches all V
// operators for a ready one at each of its V steps does 5 * 10^9 checks here
// and takes many seconds (see README "Why it is O(V + E)"). A recursive
// search would also need one stack frame per operator.
TEST(KahnTopoSort, OrdersAChainOfAHundredThousandOperators) {
  RuntimeGraph graph(Chain(100000), "chain.pnnx.param");
  graph.InitTopology();
  std::vector<int> file_order(100002);
  std::iota(file_order.begin(), file_order.end(), 0);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int> order = Indices(graph.KahnTopoSort());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(order, file_order);
  // Budgets far above the reference's time on a loaded machine, even under
  // AddressSanitizer, and far below an O(V^2) scan's
  // (docs/performance.md#build-times).
#if defined(__SANITIZE_ADDRESS__)
  const double budget = 10.0;
#else
  const double budget = 3.0;
#endif
  EXPECT_LT(seconds, budget) << "sorting 100002 operators took " << seconds
                             << " s: is a step scanning every operator? see README \"Why it is "
                                "O(V + E)\"";
}

}  // namespace
}  // namespace kuiper
