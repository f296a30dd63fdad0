// Lab course4_topo: see course4_topo/README.md.
#include <fmt/format.h>

#include <map>
#include <queue>
#include <set>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"

namespace kuiper {

std::vector<RuntimeOperator*> RuntimeGraph::KahnTopoSort() const {
  std::vector<RuntimeOperator*> order;
  // TODO(course4): order operators() with Kahn's algorithm.
  // 1. in_degree[op] = op->input_operators.size() for every operator.
  // 2. Put every operator of in-degree 0 into a queue that always pops the
  //    smallest op->index first (a std::priority_queue with a comparator, or a
  //    std::set ordered by index), so the order is the same on every run.
  // 3. Pop an operator, append it to `order`, and decrease the in-degree of
  //    each of its op->output_operators; those reaching 0 join the queue.
  // 4. If `order` has fewer operators than the graph, the rest are on or
  //    behind a cycle. Find one ON the cycle: from any unfinished operator,
  //    keep stepping to an unfinished input operator until one repeats. Throw
  //    GraphError("... cycle through operator '<name>' ...").
  // ---- your code begins ----
  std::map<const RuntimeOperator*, size_t> in_degree;
  auto by_index = [](const RuntimeOperator* a, const RuntimeOperator* b) {
    return a->index < b->index;
  };
  std::set<RuntimeOperator*, decltype(by_index)> ready(by_index);
  for (const auto& op : operators()) {
    in_degree[op.get()] = op->input_operators.size();
    if (op->input_operators.empty()) ready.insert(op.get());
  }
  while (!ready.empty()) {
    RuntimeOperator* op = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(op);
    for (RuntimeOperator* next : op->output_operators) {
      if (--in_degree[next] == 0) ready.insert(next);
    }
  }
  if (order.size() < operators().size()) {
    const RuntimeOperator* op = nullptr;
    for (const auto& candidate : operators()) {
      if (in_degree[candidate.get()] > 0) op = candidate.get();
    }
    // Every unfinished operator has an unfinished input, so the walk must
    // come back to an operator it has seen: that one is on a cycle.
    std::set<const RuntimeOperator*> seen;
    while (seen.insert(op).second) {
      for (const RuntimeOperator* input : op->input_operators) {
        if (in_degree[input] > 0) {
          op = input;
          break;
        }
      }
    }
    throw GraphError(fmt::format("the graph has a cycle through operator '{}' ({})", op->name,
                                 op->type));
  }
  // ---- your code ends ----
  return order;
}

}  // namespace kuiper
