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
  KUIPER_TODO("course7", "ClassifyWord");
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
  KUIPER_TODO("course7", "ExpressionParser::ParseCall");
  // ---- your code ends ----
}

sftensor TensorElementTrig(TokenType function, const sftensor& input) {
  // TODO(course7): a NEW tensor of input's shape holding the sine (function
  // kSin) or the cosine (kCos) of every element. `input` stays unchanged: it
  // may be a model input or another layer's output. A null or empty input is
  // a ShapeError; a function other than kSin and kCos is the caller's bug:
  // std::invalid_argument (README §3.4 "Evaluation").
  // ---- your code begins ----
  KUIPER_TODO("course7", "TensorElementTrig");
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
  KUIPER_TODO("course7", "EvaluateReversePolish");
  // ---- your code ends ----
}

}  // namespace kuiper
