// Activation buffers planned at Build (RuntimeOptions::buffer_planning,
// runtime_graph.cpp PlanOutputs): operands whose lifetimes do not overlap
// share memory. A plan must never change a result: every graph here gives
// bit-for-bit the output it gives with planning off (each operand owning its
// tensors), run after run. Loading needs lab course3; the fixtures use
// course5 (sigmoid), course6 (convolution) and course7 (sin).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kuiper/graph.hpp"
#include "kuiper/npy.hpp"

namespace kuiper {
namespace {

const std::string kPlanFixtures = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/";
const std::string kPlanGraphs = std::string(KUIPER_SOURCE_DIR) + "/kuiper/test/data/graph/";

std::vector<std::vector<float>> Values(const std::vector<sftensor>& batch) {
  std::vector<std::vector<float>> values;
  for (const sftensor& item : batch) values.push_back(item->values(/*row_major=*/true));
  return values;
}

// The outputs of two runs in a row on `input`, with planning on or off.
std::vector<std::vector<std::vector<float>>> TwoRuns(const std::string& param,
                                                     const std::string& bin,
                                                     const std::vector<sftensor>& input,
                                                     bool planning) {
  RuntimeGraph graph(param, bin);
  RuntimeOptions options;
  options.buffer_planning = planning;
  graph.Build(options);
  EXPECT_EQ(graph.planned_bytes() > 0, planning) << param;
  return {Values(graph.Forward(input)), Values(graph.Forward(input))};
}

class PlannedFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(PlannedFixture, GivesExactlyTheOutputOfOwnedTensorsOnEveryRun) {
  const std::string base = kPlanFixtures + GetParam();
  const std::vector<sftensor> input = NpyToBatch(LoadNpy(base + ".input.npy"));
  const auto owned = TwoRuns(base + ".pnnx.param", base + ".pnnx.bin", input, false);
  const auto planned = TwoRuns(base + ".pnnx.param", base + ".pnnx.bin", input, true);
  EXPECT_EQ(owned[0], owned[1]) << "without a plan, a second run differs";
  EXPECT_EQ(planned[0], owned[0]) << GetParam() << ", first run: a plan changed the result "
                                  << "(see graph.hpp, buffer_planning)";
  EXPECT_EQ(planned[1], owned[0]) << GetParam() << ", second run: a plan changed the result";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PlannedFixture,
                         ::testing::Values("tiny_net", "tiny_detect", "tiny_expression",
                                           "tiny_groupconv", "tiny_misc", "tiny_sigmoid",
                                           "tiny_sin", "tiny_yolo_head"));

// two_readers.pnnx.param: a = relu(x) is read by silu right after it and by
// the cat at the end; b = silu(a), c = hardswish(b), d = relu6(c) come
// between. Were a's life to end at its first reader, c could take a's memory
// and the cat would read c where a belongs.
float Silu(float v) { return v / (1.f + std::exp(-v)); }
float Hardswish(float v) { return v * std::min(std::max(v + 3.f, 0.f), 6.f) / 6.f; }

TEST(BufferPlan, OperandReadByTwoLaterOperatorsKeepsItsValuesUntilTheLast) {
  RuntimeGraph graph(kPlanGraphs + "two_readers.pnnx.param", "");
  graph.Build();
  ASSERT_TRUE(graph.buffer_planning());
  sftensor x = TensorCreate(2, 4, 4);
  std::vector<float> values;
  for (int i = 0; i < 32; ++i) values.push_back(std::sin(0.9f * i) * 5);
  x->Fill(values);
  const std::vector<float> got = graph.Forward(std::vector<sftensor>{x}).at(0)->values(true);
  ASSERT_EQ(got.size(), 64u);
  for (int i = 0; i < 32; ++i) {
    const float a = std::max(values[i], 0.f);
    const float d = std::min(std::max(Hardswish(Silu(a)), 0.f), 6.f);
    EXPECT_FLOAT_EQ(got[i], a) << "a = relu(x) at " << i << ", read by the cat after b, c, d";
    EXPECT_NEAR(got[32 + i], d, 1e-6f) << "d = relu6(hardswish(silu(a))) at " << i;
  }
}

// The same graph's lifetimes (steps in execution order; x is the caller's):
// a 1..5, b 2..3, c 3..4, d 4..5, e = cat(a, d) 5..end. a, d and e are live
// at once at step 5: 32 + 32 + 64 floats, 512 bytes, the least any plan can
// take, where owned tensors take 768. Largest first, lowest offset reaches it.
TEST(BufferPlan, ChainSharesMemoryDownToTheMostLiveAtOneStep) {
  RuntimeGraph graph(kPlanGraphs + "two_readers.pnnx.param", "");
  graph.Build();
  EXPECT_EQ(graph.planned_bytes(), 512u) << "see runtime_graph.cpp, PlanOutputs";
}

TEST(BufferPlan, ReturnedOutputsAreTheCallersAndOutliveTheNextRun) {
  RuntimeGraph graph(kPlanGraphs + "two_readers.pnnx.param", "");
  graph.Build();
  sftensor x = TensorCreate(2, 4, 4);
  x->Fill(1.f);
  const std::vector<sftensor> first = graph.Forward(std::vector<sftensor>{x});
  const std::vector<float> kept = first.at(0)->values(true);
  x->Fill(-2.f);
  const std::vector<sftensor> second = graph.Forward(std::vector<sftensor>{x});
  EXPECT_EQ(first.at(0)->values(true), kept) << "a later run overwrote a returned output";
  EXPECT_NE(second.at(0)->values(true), kept);
}

// The graph of `param` (no weights) twice, built: with its activation
// buffers planned (the default), and with every operand owning its tensors.
struct PlannedAndOwned {
  explicit PlannedAndOwned(const std::string& param) : planned(param, ""), owned(param, "") {
    RuntimeOptions unplanned;
    unplanned.buffer_planning = false;
    planned.Build();
    owned.Build(unplanned);
  }
  RuntimeGraph planned, owned;
};

// A `?` batch re-plans at each new batch: 1, then 3, then 1 again.
TEST(BufferPlan, BatchChangeReplansAndMatchesOwnedTensors) {
  PlannedAndOwned graphs(kPlanGraphs + "dynamic_batch_5d.pnnx.param");
  RuntimeGraph &planned = graphs.planned, &owned = graphs.owned;
  uint64_t bytes_at_1 = 0;
  for (int batch : {1, 3, 1}) {
    std::vector<sftensor> input;
    for (int n = 0; n < batch; ++n) {
      sftensor item = TensorCreate({6, 2, 3});
      std::vector<float> values;
      for (int i = 0; i < 36; ++i) values.push_back(std::cos(0.3f * (i + 36 * n)) * 4);
      item->Fill(values);
      input.push_back(item);
    }
    EXPECT_EQ(Values(planned.Forward(input)), Values(owned.Forward(input))) << "batch " << batch;
    if (batch == 1 && bytes_at_1 == 0) bytes_at_1 = planned.planned_bytes();
    if (batch == 3) EXPECT_GT(planned.planned_bytes(), bytes_at_1) << "not re-planned at batch 3";
    if (batch == 1) EXPECT_EQ(planned.planned_bytes(), bytes_at_1) << "batch 1 again";
  }
}

// join_in_place.pnnx.param (batch `?`): a = relu(x), b = silu(a), c = cat(a,
// b) along the channels, f = hardswish(c) split into f0 = hardswish(a) and
// f1 = hardswish(b), h = b + f0, e = cat(h, f1) (dim=-3: the same axis from
// the end).
// b is read after c's last reader: were the joined block to die with c, e
// (placed where c was) would take c's memory, and f1 would overwrite b
// before h reads it.
const sftensor& Item(const RuntimeGraph& graph, const std::string& op, size_t operand, size_t item,
                     bool output = false) {
  const RuntimeOperator* found = graph.FindOperator(op);
  EXPECT_NE(found, nullptr) << op;
  return (output ? found->output_operands : found->input_operands).at(operand)->datas.at(item);
}

std::vector<sftensor> JoinInput(int batch) {
  std::vector<sftensor> input;
  for (int n = 0; n < batch; ++n) {
    sftensor item = TensorCreate(2, 4, 4);
    std::vector<float> values;
    for (int i = 0; i < 32; ++i) values.push_back(std::sin(0.7f * (i + 32 * n)) * 4);
    item->Fill(values);
    input.push_back(item);
  }
  return input;
}

TEST(BufferPlan, CatPartsAreComputedInTheirPlaceInTheJoinedTensor) {
  RuntimeGraph graph(kPlanGraphs + "join_in_place.pnnx.param", "");
  graph.Build();
  for (const int batch : {1, 3}) {
    graph.Forward(JoinInput(batch));  // at a new batch the graph plans anew
    for (int n = 0; n < batch; ++n) {
      const float* c = Item(graph, "cat_c", 0, n, /*output=*/true)->raw_ptr();
      const float* e = Item(graph, "cat_e", 0, n, /*output=*/true)->raw_ptr();
      // Each cat's first part starts its item; the second follows the first's
      // 2 channels of 4x4 floats, 32 floats on.
      EXPECT_EQ(Item(graph, "cat_c", 0, n)->raw_ptr(), c) << "a, item " << n << " of " << batch;
      EXPECT_EQ(Item(graph, "cat_c", 1, n)->raw_ptr(), c + 32)
          << "b, item " << n << " of " << batch;
      EXPECT_EQ(Item(graph, "cat_e", 0, n)->raw_ptr(), e) << "h, item " << n << " of " << batch;
      EXPECT_EQ(Item(graph, "cat_e", 1, n)->raw_ptr(), e + 32)
          << "f1, item " << n << " of " << batch;
    }
  }
}

TEST(BufferPlan, CatPartsInPlaceGiveExactlyTheOutputOfOwnedTensors) {
  PlannedAndOwned graphs(kPlanGraphs + "join_in_place.pnnx.param");
  RuntimeGraph &planned = graphs.planned, &owned = graphs.owned;
  for (const int batch : {1, 3, 1}) {
    const std::vector<sftensor> input = JoinInput(batch);
    const auto expected = Values(owned.Forward(input));
    EXPECT_EQ(Values(planned.Forward(input)), expected) << "batch " << batch;
    EXPECT_EQ(Values(planned.Forward(input)), expected) << "batch " << batch << ", second run";
  }
  // The parts themselves, against the formulas.
  const std::vector<float> x = JoinInput(1)[0]->values(true);
  const std::vector<float> e = planned.Forward(JoinInput(1)).at(0)->values(true);
  ASSERT_EQ(e.size(), 64u);
  for (int i = 0; i < 32; ++i) {
    const float a = std::max(x[i], 0.f), b = Silu(a);
    EXPECT_NEAR(e[i], b + Hardswish(a), 1e-6f) << "h = b + hardswish(a) at " << i;
    EXPECT_NEAR(e[32 + i], Hardswish(b), 1e-6f) << "f1 = hardswish(b) at " << i;
  }
}

TEST(BufferPlan, OptionTurnsPlanningOffForThatGraphOnly) {
  RuntimeOptions unplanned;
  unplanned.buffer_planning = false;
  RuntimeGraph graph(kPlanGraphs + "two_readers.pnnx.param", "");
  RuntimeGraph other(kPlanGraphs + "two_readers.pnnx.param", "");
  graph.Build(unplanned);
  other.Build();
  EXPECT_FALSE(graph.buffer_planning());
  EXPECT_EQ(graph.planned_bytes(), 0u);
  EXPECT_TRUE(other.buffer_planning());
  EXPECT_GT(other.planned_bytes(), 0u);
}

// RuntimeOptions::concat_in_place off: every part gets a block of its own, and
// the cat copies them; the result does not change.
TEST(BufferPlan, CatPartsCopiedWhenJoiningInPlaceIsOff) {
  RuntimeOptions copied;
  copied.concat_in_place = false;
  RuntimeGraph in_place(kPlanGraphs + "join_in_place.pnnx.param", "");
  RuntimeGraph graph(kPlanGraphs + "join_in_place.pnnx.param", "");
  in_place.Build();
  graph.Build(copied);
  const std::vector<sftensor> input = JoinInput(3);
  EXPECT_EQ(Values(graph.Forward(input)), Values(in_place.Forward(input)));
  for (int n = 0; n < 3; ++n) {
    const float* c = Item(graph, "cat_c", 0, n, /*output=*/true)->raw_ptr();
    EXPECT_NE(Item(graph, "cat_c", 0, n)->raw_ptr(), c) << "a, item " << n;
    EXPECT_NE(Item(graph, "cat_c", 1, n)->raw_ptr(), c + 32) << "b, item " << n;
  }
}

}  // namespace
}  // namespace kuiper
