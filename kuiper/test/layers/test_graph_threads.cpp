// RuntimeOptions::threads limits the threads of that graph's Forward: a probe
// layer records the count its Forward may use (parallel.hpp's MaxThreads).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "../op_test.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {
namespace {

std::atomic<int> probe_threads{-1};  // MaxThreads() in the probe's last Forward

class ThreadProbeLayer : public Layer {
 public:
  ThreadProbeLayer() : Layer("ThreadProbe") {}
  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    probe_threads = MaxThreads();
    for (size_t i = 0; i < inputs.size(); ++i) EnsureOutput(outputs[i], inputs[i]->raw_shapes());
    return InferStatus::kInferSuccess;
  }
};

LayerRegistererWrapper kThreadProbeRegistration(
    {"test.ThreadProbe"}, [](const RuntimeOperator&) -> std::unique_ptr<Layer> {
      return std::make_unique<ThreadProbeLayer>();
    });

int ThreadsSeenByForward(int graph_threads) {
  RuntimeGraph graph(test::OneOperatorGraph("test.ThreadProbe", {}, {}, {{2, 3, 3}}, {{2, 3, 3}}),
                     "threads");
  RuntimeOptions options;
  options.threads = graph_threads;
  graph.Build(options);
  probe_threads = -1;
  graph.Forward(test::SeededItems({2, 3, 3}, 1, 1));
  return probe_threads;
}

TEST(GraphThreads, OptionLimitsTheThreadsOfThatGraphsForward) {
  SetMaxThreads(3);
  EXPECT_EQ(ThreadsSeenByForward(1), 1);
  EXPECT_EQ(ThreadsSeenByForward(2), 2);
  EXPECT_EQ(ThreadsSeenByForward(0), 3);  // no limit of its own: the process-wide count
  EXPECT_EQ(ThreadsSeenByForward(5), 3);  // a limit never raises the count
  EXPECT_EQ(MaxThreads(), 3);             // and nothing is left behind
  SetMaxThreads(0);
}

}  // namespace
}  // namespace kuiper
