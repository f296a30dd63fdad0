// Stretch task of course7_expression (optional, label course7_stretch): infix
// formulas with precedence. See course7_expression/README.md, "Stretch: infix
// with precedence". Compiled into the stretch test program only.
#include <fmt/format.h>

#include <cctype>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kuiper/error.hpp"

namespace kuiper {

// Rewrites an infix formula into the call form ExpressionParser reads:
//   "@0*@1+@2"      -> "add(mul(@0,@1),@2)"
//   "(@0+1.5)/sin(@1)" -> "div(add(@0,1.5),sin(@1))"
// Grammar (spaces are ignored):
//   sum     := product (('+' | '-') product)*
//   product := primary (('*' | '/') primary)*
//   primary := '@' digits | number | name '(' sum (',' sum)* ')' | '(' sum ')'
// where number is digits with an optional '.' and fraction, and name is
// letters. '+' '-' '*' '/' are left-associative: @0-@1-@2 is
// sub(sub(@0,@1),@2). Calls and numbers are copied as written. Throws
// ParseError naming the formula and the 0-based position of the first
// character that does not fit.
std::string InfixToCalls([[maybe_unused]] std::string_view infix) {
  std::string calls;
  // TODO(course7 stretch): one parse function per grammar rule, as in the
  // lab's recursive descent; each returns the call form of what it read and
  // leaves the position after it (README "Stretch: infix with precedence").
  // ---- your code begins ----
  KUIPER_TODO("course7_stretch", "InfixToCalls");
  // ---- your code ends ----
  return calls;
}

}  // namespace kuiper
