// Lab course7_expression: see course7_expression/README.md.
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <stdexcept>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"

namespace kuiper {

TokenType ClassifyWord(std::string_view word) {
  // The core's functions first, so that formulas without sin or cos (every
  // add(@0,@1) of ResNet18) parse before this lab is done.
  const TokenType core = CoreFunctionToken(word);  // add sub mul div pow neg exp log ...
  if (core != TokenType::kUnknown) return core;
  // TODO(course7): the lab's part of the lexer's dictionary: tell whether the
  // word names one of the two functions this lab adds, sin and cos, and
  // which; kUnknown for any other word, so that the lexer reports "unknown
  // function" at the word's position. Only exact, case-sensitive names count
  // (README "1. Tokens").
  // ---- your code begins ----
  if (word == "sin") return TokenType::kSin;
  if (word == "cos") return TokenType::kCos;
  return TokenType::kUnknown;
  // ---- your code ends ----
}

std::unique_ptr<TokenNode> ExpressionParser::ParseUnaryCall(TokenType function, size_t& index,
                                                            int depth) {
  // TODO(course7): the grammar rule for a call of a one-argument function,
  //   call1 := name '(' expression ')'
  // tokens_[index] is the name. Return the call's node, its argument as the
  // only child (left), and leave index one past the call's last token, as
  // every parse function does. Anything else where the rule expects '(' or
  // ')' is a ParseError at that token. One level of nesting deeper means one
  // more level of depth (README "2. Tree: recursive descent"). ParseBinaryCall
  // in kuiper/src/parser/expression_parser.cpp is the two-argument rule.
  // ---- your code begins ----
  auto node = std::make_unique<TokenNode>();
  node->type = function;
  ++index;  // the function's name
  Expect(index, TokenType::kLeftBracket);
  node->left = ParseExpression(index, depth + 1);
  Expect(index, TokenType::kRightBracket);
  return node;
  // ---- your code ends ----
}

sftensor TensorElementTrig(TokenType function, const sftensor& input) {
  // TODO(course7): a NEW tensor of input's shape holding the sine (function
  // kSin) or the cosine (kCos) of every element. `input` stays unchanged: it
  // may be a model input or another layer's output. A null or empty input is
  // a ShapeError; a function other than kSin and kCos is the caller's bug:
  // std::invalid_argument (README "4. Evaluation").
  // ---- your code begins ----
  if (function != TokenType::kSin && function != TokenType::kCos) {
    throw std::invalid_argument(
        fmt::format("TensorElementTrig: '{}' is neither sin nor cos", TokenTypeName(function)));
  }
  if (!input || input->empty()) throw ShapeError("TensorElementTrig: the input is empty");
  const bool cosine = function == TokenType::kCos;
  sftensor output = TensorCreate(input->raw_shapes());
  const float* x = input->raw_ptr();
  float* y = output->raw_ptr();
  for (uint32_t i = 0; i < input->size(); ++i) y[i] = cosine ? std::cos(x[i]) : std::sin(x[i]);
  return output;
  // ---- your code ends ----
}

}  // namespace kuiper
