// Stretch task of course4_topo (optional, label course4_stretch): see
// course4_topo/README.md, "Stretch: the whole cycle".
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"

namespace kuiper {

// Every operator of one cycle of `graph` (InitTopology done), in edge order:
// each one is a producer of the next and the last a producer of the first,
// starting from the operator of smallest index on that cycle. Empty when the
// graph has no cycle. With several cycles, any one of them.
std::vector<RuntimeOperator*> CycleOf([[maybe_unused]] const RuntimeGraph& graph) {
  std::vector<RuntimeOperator*> cycle;
  // TODO(course4 stretch): find the operators Kahn's algorithm leaves over,
  // walk from one of them to the first repetition as in the lab, and keep
  // the part of the walk that is the cycle, in edge order (README "Stretch:
  // the whole cycle").
  // ---- your code begins ----
  std::map<const RuntimeOperator*, size_t> in_degree;
  std::vector<RuntimeOperator*> ready;
  for (const auto& op : graph.operators()) {
    in_degree[op.get()] = op->input_operators.size();
    if (op->input_operators.empty()) ready.push_back(op.get());
  }
  // The order does not matter here: only which operators are left over.
  while (!ready.empty()) {
    RuntimeOperator* op = ready.back();
    ready.pop_back();
    for (RuntimeOperator* next : op->output_operators) {
      if (--in_degree[next] == 0) ready.push_back(next);
    }
  }
  RuntimeOperator* start = nullptr;
  for (const auto& op : graph.operators()) {
    if (in_degree[op.get()] > 0) start = op.get();
  }
  if (!start) return cycle;
  // Walk backwards (to a left-over producer) and remember where each operator
  // was met; the first repetition closes the cycle.
  std::vector<RuntimeOperator*> walk;
  std::map<const RuntimeOperator*, size_t> met_at;
  RuntimeOperator* op = start;
  while (met_at.emplace(op, walk.size()).second) {
    walk.push_back(op);
    for (RuntimeOperator* input : op->input_operators) {
      if (in_degree[input] > 0) {
        op = input;
        break;
      }
    }
  }
  // walk[met_at[op]..] runs against the edges: reverse it into edge order.
  cycle.assign(walk.begin() + static_cast<std::ptrdiff_t>(met_at[op]), walk.end());
  std::reverse(cycle.begin(), cycle.end());
  const auto first = std::min_element(
      cycle.begin(), cycle.end(),
      [](const RuntimeOperator* a, const RuntimeOperator* b) { return a->index < b->index; });
  std::rotate(cycle.begin(), first, cycle.end());
  // ---- your code ends ----
  return cycle;
}

}  // namespace kuiper
