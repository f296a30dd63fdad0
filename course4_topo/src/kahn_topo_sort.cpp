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
  KUIPER_TODO("course4", "RuntimeGraph::KahnTopoSort");
  // ---- your code ends ----
  return order;
}

}  // namespace kuiper
