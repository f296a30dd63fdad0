// Lab course7_expression: see course7_expression/README.md.
#include <cmath>
#include <memory>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"

namespace kuiper {

TokenType ClassifyWord(std::string_view word) {
  const TokenType core = CoreFunctionToken(word);  // add sub mul div pow neg exp log ...
  if (core != TokenType::kUnknown) return core;
  // TODO(course7): teach the lexer the word "sin": return TokenType::kSin for
  // it, and TokenType::kUnknown for any other word (the lexer then reports
  // "unknown function" with the word's position).
  // ---- your code begins ----
  if (word == "sin") return TokenType::kSin;
  return TokenType::kUnknown;
  // ---- your code ends ----
}

std::unique_ptr<TokenNode> ExpressionParser::ParseUnaryCall(TokenType function, size_t& index,
                                                            int depth) {
  // TODO(course7): parse a call of a one-argument function such as sin(@0).
  // tokens_[index] is the function's name. Follow ParseBinaryCall in
  // kuiper/src/parser/expression_parser.cpp, with one argument and no comma:
  // 1. A new TokenNode whose type is `function`; step index past the name.
  // 2. Expect(index, TokenType::kLeftBracket).
  // 3. node->left = ParseExpression(index, depth + 1) (the depth guards the
  //    call stack against absurd nesting; right stays empty).
  // 4. Expect(index, TokenType::kRightBracket) and return the node.
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

sftensor TensorElementSin(const sftensor& input) {
  // TODO(course7): return a NEW tensor of input's shape
  // (TensorCreate(input->raw_shapes())) holding std::sin of every element.
  // Never change `input`: it may be a model input or another layer's output.
  // Throw ShapeError if input is null or empty.
  // ---- your code begins ----
  if (!input || input->empty()) throw ShapeError("TensorElementSin: the input is empty");
  sftensor output = TensorCreate(input->raw_shapes());
  const float* x = input->raw_ptr();
  float* y = output->raw_ptr();
  for (uint32_t i = 0; i < input->size(); ++i) y[i] = std::sin(x[i]);
  return output;
  // ---- your code ends ----
}

}  // namespace kuiper
