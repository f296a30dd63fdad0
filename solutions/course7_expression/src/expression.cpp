// Lab course7_expression: see course7_expression/README.md. Two stages of
// ExpressionParser and two of the evaluator that runs its result:
//   ClassifyWord          the lexer's dictionary: the words sin and cos;
//   ExpressionParser::ParseCall
//                         the grammar's call rule, for a function of any arity;
//   TensorElementTrig     sin and cos of every element;
//   EvaluateReversePolish the stack machine over batches of tensors.
// Every pnnx.Expression layer of ResNet18 and YOLOv5s parses and runs here.
#include "kuiper/expression.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <vector>

#include "kuiper/error.hpp"

namespace kuiper {

TokenType ClassifyWord(std::string_view word) {
  // The core's 42 words first (add sub mul div pow neg exp log ... where).
  const TokenType core = CoreFunctionToken(word);
  if (core != TokenType::kUnknown) return core;
  // TODO(course7): the lab's part of the lexer's dictionary: tell whether the
  // word names one of the two functions this lab adds, sin and cos, and
  // which; kUnknown for any other word, so that the lexer reports "unknown
  // function" at the word's position. Only exact, case-sensitive names count
  // (README §3.1 "Tokens").
  // ---- your code begins ----
  if (word == "sin") return TokenType::kSin;
  if (word == "cos") return TokenType::kCos;
  return TokenType::kUnknown;
  // ---- your code ends ----
}

std::unique_ptr<TokenNode> ExpressionParser::ParseCall(TokenType function, size_t& index,
                                                       int depth) {
  // TODO(course7): the grammar rule for a call of a function of ANY arity,
  //   call := name '(' expression (',' expression)* ')'
  // tokens_[index] is the name. Parse each argument with ParseExpression one
  // level deeper (depth + 1) into node->arguments, in the order written, and
  // leave index one past the call's ')', as every parse function does.
  // Expect(index, type) steps over a token that must be there, else throws.
  // The count of arguments must be FunctionArity(function); if it is not,
  // Fail at the name's index with a message naming the function, the count it
  // takes and the count given (README §3.2 "Tree: recursive descent").
  // ---- your code begins ----
  const size_t name = index;
  auto node = std::make_unique<TokenNode>();
  node->type = function;
  ++index;  // the function's name
  Expect(index, TokenType::kLeftBracket);
  node->arguments.push_back(ParseExpression(index, depth + 1));
  while (index < tokens_.size() && tokens_[index].type == TokenType::kComma) {
    ++index;
    node->arguments.push_back(ParseExpression(index, depth + 1));
  }
  Expect(index, TokenType::kRightBracket);
  // Checked once the call is read, so that the message can give both counts.
  const size_t takes = FunctionArity(function);
  if (node->arguments.size() != takes) {
    Fail(name, fmt::format("'{}' takes {} argument(s), got {}", TokenTypeName(function), takes,
                           node->arguments.size()));
  }
  return node;
  // ---- your code ends ----
}

sftensor TensorElementTrig(TokenType function, const sftensor& input) {
  // TODO(course7): a NEW tensor of input's shape holding the sine (function
  // kSin) or the cosine (kCos) of every element. `input` stays unchanged: it
  // may be a model input or another layer's output. A null or empty input is
  // a ShapeError; a function other than kSin and kCos is the caller's bug:
  // std::invalid_argument (README §3.4 "Evaluation").
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

std::vector<sftensor> EvaluateReversePolish(const std::vector<const TokenNode*>& rpn,
                                            const std::vector<std::vector<sftensor>>& operands,
                                            size_t batch, const std::vector<sftensor>* into) {
  // TODO(course7): the stack machine. Read rpn once, front to back; the stack
  // holds values, each a batch (std::vector<sftensor>, one tensor per item):
  //  - kInput @N: push operands[N]; N out of range or operands[N] not holding
  //    `batch` tensors is a ShapeError;
  //  - kNumber: push a one-element tensor (TensorCreate({1})) holding
  //    node->value, the same tensor for every item;
  //  - a function of k = FunctionArity(type) arguments: the top k values are
  //    its arguments, the first written lowest (it was pushed first); pop them
  //    and push ApplyFunction(type, arguments, batch, ...), passing `into`
  //    only for the last node of rpn;
  //  - any other token, a function with fewer than k values on the stack, or
  //    a stack that does not end with exactly one value: Error, naming it.
  // Return the one value left (README §3.4 "Evaluation").
  // ---- your code begins ----
  std::vector<std::vector<sftensor>> stack;
  for (const TokenNode* node : rpn) {
    if (node->type == TokenType::kInput) {
      const int n = node->input_index;
      if (n < 0 || static_cast<size_t>(n) >= operands.size() || operands[n].size() != batch) {
        throw ShapeError(
            fmt::format("operand @{} is missing or does not hold {} tensors", n, batch));
      }
      stack.push_back(operands[n]);
      continue;
    }
    if (node->type == TokenType::kNumber) {
      // One tensor for the whole batch: functions never modify their arguments.
      sftensor number = TensorCreate({1});
      number->index(0) = node->value;
      stack.emplace_back(batch, number);
      continue;
    }
    const size_t arity = FunctionArity(node->type);
    if (arity == 0) {
      throw Error(fmt::format("reverse Polish: unexpected {}", TokenTypeName(node->type)));
    }
    if (stack.size() < arity) {
      throw Error(fmt::format("reverse Polish: '{}' takes {} argument(s), the stack holds {}",
                              TokenTypeName(node->type), arity, stack.size()));
    }
    // The top `arity` values, lowest first, are the arguments in the order written.
    std::vector<std::vector<sftensor>> arguments(std::make_move_iterator(stack.end() - arity),
                                                 std::make_move_iterator(stack.end()));
    stack.resize(stack.size() - arity);
    stack.push_back(
        ApplyFunction(node->type, arguments, batch, node == rpn.back() ? into : nullptr));
  }
  if (stack.size() != 1) {
    throw Error(fmt::format("reverse Polish leaves {} values instead of 1", stack.size()));
  }
  return std::move(stack.back());
  // ---- your code ends ----
}

}  // namespace kuiper
