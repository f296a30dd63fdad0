// Lexer, recursive-descent parser and reverse Polish of ExpressionParser.
// Lab course7_expression writes the grammar's call rule (ParseCall) and adds
// the words sin and cos (ClassifyWord), in course7_expression/src/expression.cpp.
#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"

namespace kuiper {

namespace {

struct FunctionName {
  std::string_view word;
  TokenType type;
};

// Every function but sin and cos, which the course7 lab adds.
constexpr FunctionName kCoreFunctions[] = {
    {"add", TokenType::kAdd},
    {"sub", TokenType::kSub},
    {"mul", TokenType::kMul},
    {"div", TokenType::kDiv},
    {"pow", TokenType::kPow},
    {"neg", TokenType::kNeg},
    {"exp", TokenType::kExp},
    {"log", TokenType::kLog},
    {"sqrt", TokenType::kSqrt},
    {"rsqrt", TokenType::kRsqrt},
    {"abs", TokenType::kAbs},
    // For ONNX's and PyTorch's element-wise operators (issue 16).
    {"max", TokenType::kMax},
    {"min", TokenType::kMin},
    {"fmod", TokenType::kFmod},
    {"remainder", TokenType::kRemainder},
    {"eq", TokenType::kEq},
    {"ne", TokenType::kNe},
    {"lt", TokenType::kLt},
    {"gt", TokenType::kGt},
    {"le", TokenType::kLe},
    {"ge", TokenType::kGe},
    {"and", TokenType::kAnd},
    {"or", TokenType::kOr},
    {"xor", TokenType::kXor},
    {"tanh", TokenType::kTanh},
    {"floor", TokenType::kFloor},
    {"ceil", TokenType::kCeil},
    {"round", TokenType::kRound},
    {"trunc", TokenType::kTrunc},
    {"sign", TokenType::kSign},
    {"erf", TokenType::kErf},
    {"tan", TokenType::kTan},
    {"sinh", TokenType::kSinh},
    {"cosh", TokenType::kCosh},
    {"asin", TokenType::kAsin},
    {"acos", TokenType::kAcos},
    {"atan", TokenType::kAtan},
    {"asinh", TokenType::kAsinh},
    {"acosh", TokenType::kAcosh},
    {"atanh", TokenType::kAtanh},
    {"not", TokenType::kNot},
    {"where", TokenType::kWhere},
};

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsWordStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool IsWordChar(char c) { return IsWordStart(c) || IsDigit(c); }

}  // namespace

std::string_view TokenTypeName(TokenType type) {
  switch (type) {
    case TokenType::kUnknown:
      return "unknown";
    case TokenType::kInput:
      return "operand";
    case TokenType::kNumber:
      return "number";
    case TokenType::kComma:
      return "','";
    case TokenType::kLeftBracket:
      return "'('";
    case TokenType::kRightBracket:
      return "')'";
    case TokenType::kSin:
      return "sin";
    case TokenType::kCos:
      return "cos";
    default:
      break;
  }
  for (const FunctionName& f : kCoreFunctions) {
    if (f.type == type) return f.word;
  }
  return "unknown";
}

int FunctionArity(TokenType type) {
  switch (type) {
    case TokenType::kWhere:
      return 3;
    case TokenType::kMax:
    case TokenType::kMin:
    case TokenType::kFmod:
    case TokenType::kRemainder:
    case TokenType::kEq:
    case TokenType::kNe:
    case TokenType::kLt:
    case TokenType::kGt:
    case TokenType::kLe:
    case TokenType::kGe:
    case TokenType::kAnd:
    case TokenType::kOr:
    case TokenType::kXor:
    case TokenType::kAdd:
    case TokenType::kSub:
    case TokenType::kMul:
    case TokenType::kDiv:
    case TokenType::kPow:
      return 2;
    case TokenType::kNeg:
    case TokenType::kExp:
    case TokenType::kLog:
    case TokenType::kSqrt:
    case TokenType::kRsqrt:
    case TokenType::kAbs:
    case TokenType::kSin:
    case TokenType::kCos:
    case TokenType::kTanh:
    case TokenType::kFloor:
    case TokenType::kCeil:
    case TokenType::kRound:
    case TokenType::kTrunc:
    case TokenType::kSign:
    case TokenType::kErf:
    case TokenType::kTan:
    case TokenType::kSinh:
    case TokenType::kCosh:
    case TokenType::kAsin:
    case TokenType::kAcos:
    case TokenType::kAtan:
    case TokenType::kAsinh:
    case TokenType::kAcosh:
    case TokenType::kAtanh:
    case TokenType::kNot:
      return 1;
    default:
      return 0;
  }
}

TokenType CoreFunctionToken(std::string_view word) {
  for (const FunctionName& f : kCoreFunctions) {
    if (f.word == word) return f.type;
  }
  return TokenType::kUnknown;
}

ExpressionParser::ExpressionParser(std::string statement, int input_count)
    : statement_(std::move(statement)), input_count_(input_count) {}

std::string_view ExpressionParser::TokenText(const Token& token) const {
  return std::string_view(statement_).substr(token.start_pos, token.end_pos - token.start_pos);
}

void ExpressionParser::Fail(size_t index, const std::string& what) const {
  const size_t position = index < tokens_.size() ? tokens_[index].start_pos : statement_.size();
  throw ParseError(fmt::format("expression '{}': position {}: {}", statement_, position, what));
}

const std::vector<Token>& ExpressionParser::Tokenize() {
  if (tokenized_) return tokens_;
  tokens_.clear();
  const std::string& s = statement_;
  const size_t n = s.size();
  const auto fail_at = [&](size_t position, const std::string& what) {
    throw ParseError(fmt::format("expression '{}': position {}: {}", s, position, what));
  };
  size_t i = 0;
  while (i < n) {
    const char c = s[i];
    size_t end = i + 1;
    TokenType type = TokenType::kUnknown;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    } else if (c == '(') {
      type = TokenType::kLeftBracket;
    } else if (c == ')') {
      type = TokenType::kRightBracket;
    } else if (c == ',') {
      type = TokenType::kComma;
    } else if (c == '@') {
      while (end < n && IsDigit(s[end])) ++end;
      if (end == i + 1) fail_at(i, "'@' must be followed by the operand's number, as in @0");
      type = TokenType::kInput;
    } else if (IsDigit(c) || c == '.' ||
               (c == '-' && i + 1 < n && (IsDigit(s[i + 1]) || s[i + 1] == '.'))) {
      // [-] digits [. digits] [e [+-] digits], at least one digit before the exponent.
      end = c == '-' ? i + 1 : i;
      size_t digits = 0;
      while (end < n && IsDigit(s[end])) ++end, ++digits;
      if (end < n && s[end] == '.') {
        ++end;
        while (end < n && IsDigit(s[end])) ++end, ++digits;
      }
      if (digits == 0) fail_at(i, "a number needs at least one digit");
      if (end < n && (s[end] == 'e' || s[end] == 'E')) {
        const size_t e = end++;
        if (end < n && (s[end] == '+' || s[end] == '-')) ++end;
        if (end >= n || !IsDigit(s[end])) fail_at(e, "the exponent of a number needs digits");
        while (end < n && IsDigit(s[end])) ++end;
      }
      type = TokenType::kNumber;
    } else if (IsWordStart(c)) {
      while (end < n && IsWordChar(s[end])) ++end;
      const std::string_view word = std::string_view(s).substr(i, end - i);
      type = ClassifyWord(word);
      if (type == TokenType::kUnknown) fail_at(i, fmt::format("unknown function '{}'", word));
    } else {
      fail_at(i, fmt::format("unexpected character '{}'", c));
    }
    tokens_.push_back(Token{type, static_cast<int32_t>(i), static_cast<int32_t>(end)});
    i = end;
  }
  tokenized_ = true;
  return tokens_;
}

const TokenNode& ExpressionParser::Generate() {
  if (root_) return *root_;
  Tokenize();
  if (tokens_.empty()) Fail(0, "the expression is empty");
  size_t index = 0;
  std::unique_ptr<TokenNode> root = ParseExpression(index, 1);
  if (index != tokens_.size()) {
    Fail(index,
         fmt::format("unexpected '{}' after the end of the expression", TokenText(tokens_[index])));
  }
  root_ = std::move(root);
  return *root_;
}

std::unique_ptr<TokenNode> ExpressionParser::ParseExpression(size_t& index, int depth) {
  if (depth > kMaxDepth) {
    Fail(index, fmt::format("the expression nests deeper than {} levels", kMaxDepth));
  }
  if (index >= tokens_.size()) {
    Fail(index, "expected an operand, a number or a function, got the end of the expression");
  }
  const Token& token = tokens_[index];
  const std::string_view text = TokenText(token);
  if (token.type == TokenType::kInput) {
    auto node = std::make_unique<TokenNode>();
    node->type = TokenType::kInput;
    const auto [end, error] =
        std::from_chars(text.data() + 1, text.data() + text.size(), node->input_index);
    if (error != std::errc() || end != text.data() + text.size()) {
      Fail(index, fmt::format("operand '{}' is out of range", text));
    }
    if (input_count_ >= 0 && node->input_index >= input_count_) {
      Fail(index, fmt::format("operand '{}' does not exist: the operator has {} input(s)", text,
                              input_count_));
    }
    ++index;
    return node;
  }
  if (token.type == TokenType::kNumber) {
    auto node = std::make_unique<TokenNode>();
    node->type = TokenType::kNumber;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), node->value);
    if (error != std::errc() || end != text.data() + text.size()) {
      Fail(index, fmt::format("number '{}' does not fit a float", text));
    }
    ++index;
    return node;
  }
  if (FunctionArity(token.type) > 0) return ParseCall(token.type, index, depth);
  Fail(index, fmt::format("expected an operand, a number or a function, got '{}'", text));
}

void ExpressionParser::Expect(size_t& index, TokenType type) {
  if (index >= tokens_.size()) {
    Fail(index, fmt::format("expected {}, got the end of the expression", TokenTypeName(type)));
  }
  if (tokens_[index].type != type) {
    Fail(index,
         fmt::format("expected {}, got '{}'", TokenTypeName(type), TokenText(tokens_[index])));
  }
  ++index;
}

namespace {

void PostOrder(const TokenNode* node, std::vector<const TokenNode*>& order) {
  for (const auto& argument : node->arguments) PostOrder(argument.get(), order);
  order.push_back(node);
}

}  // namespace

std::vector<const TokenNode*> ExpressionParser::ReversePolish() {
  std::vector<const TokenNode*> order;
  PostOrder(&Generate(), order);  // depth is bounded by kMaxDepth
  return order;
}

}  // namespace kuiper
