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
  KUIPER_TODO("course4_stretch", "CycleOf");
  // ---- your code ends ----
  return cycle;
}

}  // namespace kuiper
