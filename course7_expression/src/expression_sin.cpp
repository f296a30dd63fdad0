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
  KUIPER_TODO("course7", "ClassifyWord");
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
  KUIPER_TODO("course7", "ExpressionParser::ParseUnaryCall");
  // ---- your code ends ----
}

sftensor TensorElementSin(const sftensor& input) {
  // TODO(course7): return a NEW tensor of input's shape
  // (TensorCreate(input->raw_shapes())) holding std::sin of every element.
  // Never change `input`: it may be a model input or another layer's output.
  // Throw ShapeError if input is null or empty.
  // ---- your code begins ----
  KUIPER_TODO("course7", "TensorElementSin");
  // ---- your code ends ----
}

}  // namespace kuiper
