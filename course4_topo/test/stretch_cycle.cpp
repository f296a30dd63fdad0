// course4_topo stretch task: CycleOf reports every operator of a cycle, in
// order. Optional; not part of the lab's grade (label course4_stretch).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "kuiper/graph.hpp"

namespace kuiper {

// course4_topo/src/stretch_cycle.cpp
std::vector<RuntimeOperator*> CycleOf(const RuntimeGraph& graph);

namespace {

const std::string kSource = KUIPER_SOURCE_DIR;

std::vector<std::string> Names(const std::vector<RuntimeOperator*>& ops) {
  std::vector<std::string> names;
  for (const RuntimeOperator* op : ops) names.push_back(op->name);
  return names;
}

// Each operator produces an input of the next, the last one of the first,
// and none appears twice.
void ExpectIsACycle(const std::vector<RuntimeOperator*>& cycle) {
  ASSERT_FALSE(cycle.empty());
  EXPECT_EQ(std::set<RuntimeOperator*>(cycle.begin(), cycle.end()).size(), cycle.size())
      << "an operator appears twice";
  for (size_t i = 0; i < cycle.size(); ++i) {
    const RuntimeOperator* from = cycle[i];
    const RuntimeOperator* to = cycle[(i + 1) % cycle.size()];
    const auto& consumers = from->output_operators;
    EXPECT_NE(std::find(consumers.begin(), consumers.end(), to), consumers.end())
        << from->name << " must be a producer of " << to->name
        << " (see README \"Stretch: the whole cycle\")";
  }
}

TEST(CycleOf, NamesTheWholeCycleInEdgeOrderFromItsSmallestIndex) {
  RuntimeGraph graph(kSource + "/course4_topo/test/data/cycle.pnnx.param", "");
  graph.InitTopology();
  EXPECT_EQ(Names(CycleOf(graph)), std::vector<std::string>({"join", "loop_a", "loop_b"}));
}

TEST(CycleOf, LeavesOutOperatorsBehindTheCycle) {
  RuntimeGraph graph(pnnx::ParseParam("7767517\n6 5\n"
                                      "pnnx.Input input 0 1 0\n"
                                      "nn.ReLU early 1 1 2 4\n"
                                      "pnnx.Expression join 2 1 0 3 1 expr=add(@0,@1)\n"
                                      "nn.ReLU loop_a 1 1 1 2\n"
                                      "nn.ReLU loop_b 1 1 2 3\n"
                                      "pnnx.Output output 1 0 4\n",
                                      "hidden_cycle.pnnx.param"),
                     "hidden_cycle.pnnx.param");
  graph.InitTopology();
  EXPECT_EQ(Names(CycleOf(graph)), std::vector<std::string>({"join", "loop_a", "loop_b"}));
}

TEST(CycleOf, AnOperatorReadingItsOwnOutputIsACycleOfOne) {
  RuntimeGraph graph(pnnx::ParseParam("7767517\n4 3\n"
                                      "pnnx.Input input 0 1 0\n"
                                      "pnnx.Expression self 2 1 0 1 1 expr=add(@0,@1)\n"
                                      "nn.ReLU relu 1 1 1 2\n"
                                      "pnnx.Output output 1 0 2\n",
                                      "self.pnnx.param"),
                     "self.pnnx.param");
  graph.InitTopology();
  EXPECT_EQ(Names(CycleOf(graph)), std::vector<std::string>({"self"}));
}

TEST(CycleOf, ALongCycleIsReportedWhole) {
  // join reads the input and the last of 500 ReLUs; the ReLUs form a chain
  // from join, listed in reverse so that file order and edge order differ.
  const int length = 500;
  std::string text =
      fmt::format("7767517\n{} {}\npnnx.Input input 0 1 0\n", length + 3, length + 2);
  text += fmt::format("pnnx.Expression join 2 1 0 {} 1 expr=add(@0,@1)\n", length + 1);
  for (int i = length; i >= 1; --i) text += fmt::format("nn.ReLU r{} 1 1 {} {}\n", i, i, i + 1);
  text += "pnnx.Output output 1 0 2\n";
  RuntimeGraph graph(pnnx::ParseParam(text, "long.pnnx.param"), "long.pnnx.param");
  graph.InitTopology();
  const std::vector<RuntimeOperator*> cycle = CycleOf(graph);
  ExpectIsACycle(cycle);
  ASSERT_EQ(cycle.size(), static_cast<size_t>(length + 1));
  EXPECT_EQ(cycle.front()->name, "join");
  EXPECT_EQ(cycle[1]->name, "r1");
  EXPECT_EQ(cycle.back()->name, fmt::format("r{}", length));
}

TEST(CycleOf, OneOfTwoCyclesIsReported) {
  RuntimeGraph graph(pnnx::ParseParam("7767517\n7 6\n"
                                      "pnnx.Input input 0 1 0\n"
                                      "pnnx.Expression a 2 1 0 2 1 expr=add(@0,@1)\n"
                                      "nn.ReLU b 1 1 1 2\n"
                                      "pnnx.Expression c 2 1 2 4 3 expr=add(@0,@1)\n"
                                      "nn.ReLU d 1 1 3 4\n"
                                      "nn.ReLU e 1 1 4 5\n"
                                      "pnnx.Output output 1 0 5\n",
                                      "two.pnnx.param"),
                     "two.pnnx.param");
  graph.InitTopology();
  const std::vector<RuntimeOperator*> cycle = CycleOf(graph);
  ExpectIsACycle(cycle);
  const std::vector<std::string> names = Names(cycle);
  EXPECT_TRUE(names == std::vector<std::string>({"a", "b"}) ||
              names == std::vector<std::string>({"c", "d"}))
      << fmt::format("{}", fmt::join(names, " "));
}

TEST(CycleOf, AGraphWithoutCycleHasNone) {
  RuntimeGraph graph(kSource + "/models/fixtures/resnet18.pnnx.param", "");
  graph.InitTopology();
  EXPECT_TRUE(CycleOf(graph).empty());
}

}  // namespace
}  // namespace kuiper
