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
  const auto scalar = [](const auto& v) -> std::string {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
    if constexpr (std::is_same_v<T, int>) return std::to_string(v);
    if constexpr (std::is_same_v<T, float>) return fmt::format("{:e}", v);
    if constexpr (std::is_same_v<T, std::string>) return v;
  };
  return std::visit(
      [&scalar](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "None";
        } else if constexpr (std::is_same_v<T, std::vector<int>> ||
                             std::is_same_v<T, std::vector<float>> ||
                             std::is_same_v<T, std::vector<std::string>>) {
          std::string text = "(";
          for (size_t i = 0; i < v.size(); ++i) text += (i ? "," : "") + scalar(v[i]);
          return text + ")";
        } else {
          return scalar(v);
        }
      },
      value);
  // ---- your code ends ----
}

}  // namespace kuiper::stretch
