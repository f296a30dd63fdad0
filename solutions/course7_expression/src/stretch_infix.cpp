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
  // Spaces are dropped first; `original` maps a position of `text` back to
  // the formula as written, for error messages.
  std::string text;
  std::vector<size_t> original;
  for (size_t i = 0; i < infix.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(infix[i])) == 0) {
      text += infix[i];
      original.push_back(i);
    }
  }
  size_t at = 0;
  const auto fail = [&](const std::string& what) {
    const size_t position = at < original.size() ? original[at] : infix.size();
    throw ParseError(fmt::format("infix '{}': position {}: {}", infix, position, what));
  };
  const auto is = [&](char c) { return at < text.size() && text[at] == c; };
  const auto digits = [&] {
    const size_t start = at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) != 0) ++at;
    return at > start;
  };
  std::function<std::string()> sum;
  const auto primary = [&]() -> std::string {
    const size_t start = at;
    if (is('@')) {
      ++at;
      if (!digits()) {
        at = start;
        fail("'@' must be followed by the operand's number");
      }
      return text.substr(start, at - start);
    }
    if (is('(')) {
      ++at;
      std::string inner = sum();
      if (!is(')')) fail("expected ')'");
      ++at;
      return inner;
    }
    if (at < text.size() && (std::isdigit(static_cast<unsigned char>(text[at])) != 0 || is('.'))) {
      bool any = digits();
      if (is('.')) {
        ++at;
        any = digits() || any;
      }
      if (!any) fail("a number needs at least one digit");
      return text.substr(start, at - start);
    }
    if (at < text.size() && std::isalpha(static_cast<unsigned char>(text[at])) != 0) {
      while (at < text.size() && std::isalpha(static_cast<unsigned char>(text[at])) != 0) ++at;
      std::string call = text.substr(start, at - start);
      if (!is('(')) fail("expected '(' after a function's name");
      ++at;
      call += "(" + sum();
      while (is(',')) {
        ++at;
        call += "," + sum();
      }
      if (!is(')')) fail("expected ')'");
      ++at;
      return call + ")";
    }
    fail(at < text.size() ? fmt::format("unexpected '{}'", text[at]) : "unexpected end");
    return {};  // not reached: fail throws
  };
  const auto product = [&]() {
    std::string left = primary();
    while (is('*') || is('/')) {
      const char op = text[at++];
      left = fmt::format("{}({},{})", op == '*' ? "mul" : "div", left, primary());
    }
    return left;
  };
  sum = [&]() {
    std::string left = product();
    while (is('+') || is('-')) {
      const char op = text[at++];
      left = fmt::format("{}({},{})", op == '+' ? "add" : "sub", left, product());
    }
    return left;
  };
  calls = sum();
  if (at != text.size()) fail(fmt::format("unexpected '{}' after the end", text[at]));
  // ---- your code ends ----
  return calls;
}

}  // namespace kuiper
