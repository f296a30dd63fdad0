// The expression of a pnnx.Expression operator, such as
// add(mul(@0,@1),sin(@2)): @N is the operator's N-th input, numbers are
// constants, and functions are written as calls.
//
//   ExpressionParser parser("add(mul(@0,@1),@2)", /*input_count=*/3);
//   parser.Tokenize();      // add ( mul ( @0 , @1 ) , @2 )
//   parser.Generate();      // the tree add(mul(@0, @1), @2)
//   parser.ReversePolish(); // @0 @1 mul @2 add: the order a stack evaluates it in
//
// Malformed text throws ParseError naming the expression and the character
// position (0-based) where it goes wrong.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kuiper/tensor.hpp"

namespace kuiper {

enum class TokenType {
  kUnknown,
  kInput,         // @N
  kNumber,        // 2, -1.5, 2.000000e+00
  kComma,         // ,
  kLeftBracket,   // (
  kRightBracket,  // )
  // Functions of two arguments.
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  // Functions of one argument.
  kNeg,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kAbs,
  kSin,  // sin and cos: lab course7_expression
  kCos,
  // Core functions for the element-wise operators of ONNX and PyTorch (issue
  // 16). Comparisons and logic give 1 for true and 0 for false, and read any
  // nonzero argument as true. Two arguments:
  kMax,        // NaN if either is NaN (torch.maximum, np.maximum)
  kMin,        // likewise
  kFmod,       // C's fmod: the remainder has the dividend's sign
  kRemainder,  // Python's %: the remainder has the divisor's sign
  kEq,
  kNe,
  kLt,
  kGt,
  kLe,
  kGe,
  kAnd,
  kOr,
  kXor,
  // One argument.
  kTanh,
  kFloor,
  kCeil,
  kRound,  // half to even, as ONNX Round and torch.round
  kTrunc,  // toward zero
  kSign,   // -1, 0 or 1 (NaN stays NaN)
  kErf,
  kTan,
  kSinh,
  kCosh,
  kAsin,
  kAcos,
  kAtan,
  kAsinh,
  kAcosh,
  kAtanh,
  kNot,
  // Three arguments: where(condition, a, b) is a where condition is nonzero, else b.
  kWhere,
};

// The function's name as written ("add", "sin", ...), or a description of
// any other token type ("operand", "number", "','", ...).
std::string_view TokenTypeName(TokenType type);

// 3 for where; 2 for add sub mul div pow max min fmod remainder, the
// comparisons and and/or/xor; 1 for the functions of one argument; 0 otherwise.
int FunctionArity(TokenType type);

// The function a word names, for the functions the core knows (every one but
// sin and cos); kUnknown for any other word.
TokenType CoreFunctionToken(std::string_view word);

// ---- lab course7_expression (course7_expression/src/expression.cpp) ----
// The function a word names, sin and cos included; kUnknown for any other
// word (exact, case-sensitive match).
TokenType ClassifyWord(std::string_view word);
// A new tensor of input's shape holding the sine (function kSin) or cosine
// (kCos) of every element. Throws ShapeError for a null or empty input and
// std::invalid_argument for any other function.
sftensor TensorElementTrig(TokenType function, const sftensor& input);

struct Token {
  TokenType type = TokenType::kUnknown;
  int32_t start_pos = 0;  // first character in the statement
  int32_t end_pos = 0;    // one past the last character
};

// A node of the expression tree. A function has its arguments as children,
// in the order written (FunctionArity(type) of them); an input or a number is
// a leaf without arguments.
struct TokenNode {
  TokenType type = TokenType::kUnknown;
  int32_t input_index = -1;  // N of @N, for kInput
  float value = 0.f;         // for kNumber
  std::vector<std::unique_ptr<TokenNode>> arguments;
};

class ExpressionParser {
 public:
  // Nesting deeper than this is rejected rather than risk the call stack.
  static constexpr int kMaxDepth = 256;

  // input_count >= 0 makes Generate reject any @N with N >= input_count.
  explicit ExpressionParser(std::string statement, int input_count = -1);

  // Splits the statement into tokens; spaces are skipped. Throws ParseError
  // for a character or word it does not know, @ without digits, or a
  // malformed number.
  const std::vector<Token>& Tokenize();

  // Builds the tree of the whole statement (tokenizing first if needed).
  // Throws ParseError for a misplaced or missing token, an operand index out
  // of range, tokens after the end, an empty statement or nesting deeper than
  // kMaxDepth.
  const TokenNode& Generate();

  // The tree's nodes in reverse Polish (post-order: arguments before their
  // function). Pointers into the tree, which the parser keeps.
  std::vector<const TokenNode*> ReversePolish();

  const std::string& statement() const { return statement_; }
  const std::vector<Token>& tokens() const { return tokens_; }
  // The characters of a token, e.g. "@12" or "mul".
  std::string_view TokenText(const Token& token) const;

 private:
  // expression := @N | number | call
  // Parses the expression starting at tokens_[index] and leaves index one
  // past its last token. `depth` counts the levels of nesting, 1 at the root.
  std::unique_ptr<TokenNode> ParseExpression(size_t& index, int depth);
  // Lab course7_expression: the call of a function of any arity,
  //   call := name '(' expression (',' expression)* ')'
  // with the function's name at tokens_[index] and its arguments one level
  // deeper than the call. Throws ParseError for a misplaced token or a count
  // of arguments other than FunctionArity(function), naming the function,
  // both counts and the position of its name.
  std::unique_ptr<TokenNode> ParseCall(TokenType function, size_t& index, int depth);
  // Throws unless tokens_[index] has `type`; then steps index past it.
  void Expect(size_t& index, TokenType type);
  // A ParseError at the character where token `index` starts (the end of
  // the statement when index is past the last token).
  [[noreturn]] void Fail(size_t index, const std::string& what) const;

  std::string statement_;
  int input_count_;
  std::vector<Token> tokens_;
  bool tokenized_ = false;
  std::unique_ptr<TokenNode> root_;
};

// ---- evaluation ----
// Element-wise functions with NumPy broadcasting over the logical shapes
// (raw_shapes, any rank): aligned from the last dimension, each dimension
// must be equal or 1 on one side, and the shorter shape counts as having
// leading 1s. The result has the larger rank. Throws ShapeError for shapes
// that do not broadcast.
// The result goes into `into` when it already has the result's shape and is
// neither argument (a layer's planned output), else into a new tensor; the
// tensor written is returned.
sftensor TensorElementBinary(TokenType function, const sftensor& a, const sftensor& b,
                             const sftensor& into = nullptr);
// A function of one argument of every element (sin and cos through the lab).
sftensor TensorElementUnary(TokenType function, const sftensor& input);
// where(condition, a, b) with NumPy broadcasting among the three.
sftensor TensorElementWhere(const sftensor& condition, const sftensor& a, const sftensor& b);

// Applies `function` to its FunctionArity(function) arguments (1 to 3), in
// the order written, each a batch of `batch` tensors: result i is the
// function of item i of every argument (the items in parallel; one step of
// the lab's stack machine). With `into` (batch tensors), a
// function of two arguments writes item i's result into into[i] as
// TensorElementBinary does. Throws ShapeError when shapes do not broadcast
// and std::invalid_argument when the count of arguments is not the
// function's arity.
std::vector<sftensor> ApplyFunction(TokenType function,
                                    const std::vector<std::vector<sftensor>>& arguments,
                                    size_t batch, const std::vector<sftensor>* into = nullptr);

// ---- lab course7_expression (course7_expression/src/expression.cpp) ----
// Evaluates `rpn` for every batch item on a stack of batches: an input pushes
// operands[N] (never modified), a number a one-element tensor broadcast to
// any shape, a function pops its arguments and pushes its result
// (ApplyFunction). All operands must hold `batch` tensors: a missing operand
// or one of another batch is a ShapeError. A function without enough values
// on the stack, a token that is neither operand, number nor function, or a
// stack that does not end with exactly one value is an Error naming it.
// Throws ShapeError when shapes do not broadcast. With `into` (batch
// tensors), the LAST function (the residual add of ResNet and YOLOv5) writes
// its result into `into` (ApplyFunction), so a layer's planned output is
// reused instead of a tensor allocated per run.
std::vector<sftensor> EvaluateReversePolish(const std::vector<const TokenNode*>& rpn,
                                            const std::vector<std::vector<sftensor>>& operands,
                                            size_t batch,
                                            const std::vector<sftensor>* into = nullptr);

}  // namespace kuiper
