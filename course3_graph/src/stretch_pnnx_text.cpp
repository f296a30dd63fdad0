// Stretch task of course3_graph (optional, label course3_stretch): the
// reverse of the lab, a RuntimeParameter written back as PNNX writes it. See
// course3_graph/README.md §10.
#include <fmt/format.h>

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "kuiper/runtime.hpp"

namespace kuiper::stretch {

// The text PNNX writes after `key=` for this value: None, True/False, an int
// in decimal, a float in printf's %e (1.000000e-05), a string as it is, and an
// array as (a,b,c) with its elements written the same way ("()" when empty).
std::string PnnxText(const RuntimeParameter& value);

std::string PnnxText(const RuntimeParameter& value) {
  // TODO(course3 stretch): one std::visit over the variant, with a branch for
  // every alternative (README §10 shows the spellings and the two ways to
  // write a visitor).
  // ---- your code begins ----
  KUIPER_TODO("course3_stretch", "PnnxText");
  // ---- your code ends ----
}

}  // namespace kuiper::stretch
