// course4_topo hidden tests: ties broken by index wherever the operators sit
// in memory, producers with several outputs, sources that are not pnnx.Input,
// a self-loop, and a cycle report reached through a mixed operator. Every
// expected order is worked out by hand from the README's rule: the ready
// operator of smallest index goes next.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"

namespace kuiper {
namespace {

std::vector<std::string> HiddenNames(const std::vector<RuntimeOperator*>& order) {
  std::vector<std::string> names;
  for (const RuntimeOperator* op : order) names.push_back(op->name);
  return names;
}

RuntimeGraph HiddenGraph(const std::string& text, const std::string& name) {
  return RuntimeGraph(pnnx::ParseParam(text, name), name);
}

// The GraphError message of KahnTopoSort, or "" when it throws none.
std::string HiddenSortError(const RuntimeGraph& graph) {
  try {
    graph.KahnTopoSort();
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

TEST(HiddenKahnTopoSort, TiesGoByIndexWhereverTheOperatorsLieInMemory) {
  // a, b, c and d all become ready together. Loading the graph a second time
  // frees the first operators and allocates new ones, which the allocator
  // typically places in reverse address order: a ready set ordered by
  // pointer then no longer follows the file.
  RuntimeGraph graph = HiddenGraph(
      "7767517\n7 6\n"
      "pnnx.Input input 0 1 0\n"
      "nn.ReLU a 1 1 0 1\n"
      "nn.ReLU b 1 1 0 2\n"
      "nn.ReLU c 1 1 0 3\n"
      "nn.ReLU d 1 1 0 4\n"
      "pnnx.Expression sum 4 1 1 2 3 4 5 expr=add(add(@0,@1),add(@2,@3))\n"
      "pnnx.Output output 1 0 5\n",
      "ties.pnnx.param");
  const std::vector<std::string> expected = {"input", "a", "b", "c", "d", "sum", "output"};
  for (int load = 0; load < 3; ++load) {
    graph.InitTopology();
    EXPECT_EQ(HiddenNames(graph.KahnTopoSort()), expected)
        << "load " << load << "; see README \"Determinism\": ties go to the smallest index, "
        << "not the smallest address";
  }
}

TEST(HiddenKahnTopoSort, ProducerOfTwoOperandsReadByOneConsumerIsOneDependency) {
  // split produces operands 1 and 2; join reads both and operand 3 of late,
  // which is listed after join. join has two producers (input_operators),
  // not three input operands' worth of waiting.
  RuntimeGraph graph = HiddenGraph(
      "7767517\n5 5\n"
      "pnnx.Input input 0 1 0\n"
      "torch.chunk split 1 2 0 1 2 chunks=2 dim=0\n"
      "pnnx.Expression join 3 1 1 2 3 4 expr=add(add(@0,@1),@2)\n"
      "nn.ReLU late 1 1 0 3\n"
      "pnnx.Output output 1 0 4\n",
      "chunk.pnnx.param");
  graph.InitTopology();
  ASSERT_EQ(graph.operators()[2]->input_operators.size(), 2u);
  std::vector<std::string> names;
  try {
    names = HiddenNames(graph.KahnTopoSort());
  } catch (const GraphError& e) {
    FAIL() << e.what() << "\nsee README \"The in-degree invariant\": the in-degree counts "
           << "producers, not operands";
  }
  EXPECT_EQ(names, std::vector<std::string>({"input", "split", "late", "join", "output"}));
}

TEST(HiddenKahnTopoSort, SourceThatIsNotAGraphInputStartsReady) {
  // A pnnx.Attribute (a constant) has no producer either: in-degree 0 makes
  // an operator ready, whatever its type.
  RuntimeGraph graph = HiddenGraph(
      "7767517\n5 4\n"
      "pnnx.Attribute weight 0 1 0\n"
      "pnnx.Input input 0 1 1\n"
      "pnnx.Expression add 2 1 1 0 2 expr=add(@0,@1)\n"
      "nn.ReLU relu 1 1 2 3\n"
      "pnnx.Output output 1 0 3\n",
      "constant.pnnx.param");
  graph.InitTopology();
  std::vector<std::string> names;
  try {
    names = HiddenNames(graph.KahnTopoSort());
  } catch (const GraphError& e) {
    FAIL() << e.what() << "\nsee README \"The in-degree invariant\": every operator of "
           << "in-degree 0 is ready at the start";
  }
  EXPECT_EQ(names, std::vector<std::string>({"weight", "input", "add", "relu", "output"}));
}

TEST(HiddenKahnTopoSort, OperatorReadingItsOwnOutputIsACycle) {
  // acc reads operand 1, which it produces itself: it waits for itself.
  RuntimeGraph graph = HiddenGraph(
      "7767517\n4 3\n"
      "pnnx.Input input 0 1 0\n"
      "pnnx.Expression acc 2 1 0 1 1 expr=add(@0,@1)\n"
      "nn.ReLU relu 1 1 1 2\n"
      "pnnx.Output output 1 0 2\n",
      "self_loop.pnnx.param");
  graph.InitTopology();
  const std::string what = HiddenSortError(graph);
  ASSERT_FALSE(what.empty()) << "a self-loop is a cycle of one operator; see README "
                                "\"Reporting a cycle\"";
  EXPECT_NE(what.find("cycle"), std::string::npos) << what;
  EXPECT_NE(what.find("'acc'"), std::string::npos) << what;
}

TEST(HiddenKahnTopoSort, CycleReportFollowsTheProducerThatIsStillWaiting) {
  // The cycle is join -> loop_a -> loop_b -> join. `behind` reads the graph
  // input (done) and loop_b (waiting): only the waiting producer leads to the
  // cycle, whichever producer comes first.
  RuntimeGraph graph = HiddenGraph(
      "7767517\n6 5\n"
      "pnnx.Input input 0 1 0\n"
      "pnnx.Expression join 2 1 0 3 1 expr=add(@0,@1)\n"
      "nn.ReLU loop_a 1 1 1 2\n"
      "nn.ReLU loop_b 1 1 2 3\n"
      "pnnx.Expression behind 2 1 0 3 4 expr=add(@0,@1)\n"
      "pnnx.Output output 1 0 4\n",
      "behind.pnnx.param");
  graph.InitTopology();
  const std::string what = HiddenSortError(graph);
  ASSERT_FALSE(what.empty()) << "a cyclic graph must throw GraphError";
  const bool names_cycle_member = what.find("'join'") != std::string::npos ||
                                  what.find("'loop_a'") != std::string::npos ||
                                  what.find("'loop_b'") != std::string::npos;
  EXPECT_TRUE(names_cycle_member)
      << what << "\nexpected 'join', 'loop_a' or 'loop_b'; see README \"Reporting a cycle\"";
  EXPECT_EQ(what.find("'behind'"), std::string::npos) << what;
}

}  // namespace
}  // namespace kuiper
