// Evaluation of an expression in reverse Polish on a stack of batches, with
// NumPy broadcasting between the operands of a function.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"

namespace kuiper {

namespace {

// Large element-wise loops share their elements among the threads, unless
// they already run inside a parallel region (one batch item per thread).
bool SplitElements(uint32_t size) { return size >= (1u << 16) && !omp_in_parallel(); }

// out = op(a, b) over the broadcast 3-D views: a dimension of size 1 on one
// side is read at index 0 for every index of the other side.
template <typename Op>
void Broadcast(const ftensor& a, const ftensor& b, ftensor& out, Op op) {
  const float* x = a.raw_ptr();
  const float* y = b.raw_ptr();
  float* z = out.raw_ptr();
  if (a.shapes() == b.shapes()) {  // the common case: no index arithmetic
    const int64_t size = out.size();
#pragma omp parallel for schedule(static) if (SplitElements(size))
    for (int64_t i = 0; i < size; ++i) z[i] = op(x[i], y[i]);
    return;
  }
  // Storage offset of (r, c, ch) in a tensor: r + c * rows + ch * rows * cols;
  // a broadcast dimension gets stride 0.
  const auto strides = [](const ftensor& t) {
    return std::array<uint32_t, 3>{t.rows() == 1 ? 0 : 1u, t.cols() == 1 ? 0 : t.rows(),
                                   t.channels() == 1 ? 0 : t.rows() * t.cols()};
  };
  const std::array<uint32_t, 3> sa = strides(a), sb = strides(b);
  for (uint32_t ch = 0; ch < out.channels(); ++ch) {
    for (uint32_t c = 0; c < out.cols(); ++c) {
      for (uint32_t r = 0; r < out.rows(); ++r) {
        *z++ = op(x[r * sa[0] + c * sa[1] + ch * sa[2]], y[r * sb[0] + c * sb[1] + ch * sb[2]]);
      }
    }
  }
}

template <typename Op>
sftensor Map(const sftensor& input, Op op) {
  sftensor out = TensorCreate(input->raw_shapes());
  const float* x = input->raw_ptr();
  float* y = out->raw_ptr();
  const int64_t size = input->size();
#pragma omp parallel for schedule(static) if (SplitElements(size))
  for (int64_t i = 0; i < size; ++i) y[i] = op(x[i]);
  return out;
}

// Runs fn(i) for every item in parallel. An exception cannot leave an OpenMP
// loop, so the first one is kept and rethrown afterwards.
template <typename Fn>
void ForEachItem(size_t batch, Fn fn) {
  if (batch == 1) return fn(0);  // the element loops share one item among the threads
  std::exception_ptr error;
#pragma omp parallel for
  for (int i = 0; i < static_cast<int>(batch); ++i) {
    try {
      fn(i);
    } catch (...) {
#pragma omp critical
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace

sftensor TensorElementBinary(TokenType function, const sftensor& a, const sftensor& b) {
  if (!a || !b || a->empty() || b->empty()) {
    throw ShapeError(fmt::format("{}: an argument is empty", TokenTypeName(function)));
  }
  const std::vector<uint32_t> sa = a->shapes(), sb = b->shapes();
  std::vector<uint32_t> shape(3);
  for (int d = 0; d < 3; ++d) {
    if (sa[d] != sb[d] && sa[d] != 1 && sb[d] != 1) {
      throw ShapeError(fmt::format("{}: shapes ({}) and ({}) do not broadcast",
                                   TokenTypeName(function), fmt::join(a->raw_shapes(), ","),
                                   fmt::join(b->raw_shapes(), ",")));
    }
    shape[d] = std::max(sa[d], sb[d]);
  }
  // The result has the larger rank: the last `rank` dimensions of the 3-D view.
  const size_t rank = std::max(a->raw_shapes().size(), b->raw_shapes().size());
  sftensor out = TensorCreate(std::vector<uint32_t>(shape.end() - rank, shape.end()));
  switch (function) {
    case TokenType::kAdd:
      Broadcast(*a, *b, *out, [](float x, float y) { return x + y; });
      break;
    case TokenType::kSub:
      Broadcast(*a, *b, *out, [](float x, float y) { return x - y; });
      break;
    case TokenType::kMul:
      Broadcast(*a, *b, *out, [](float x, float y) { return x * y; });
      break;
    case TokenType::kDiv:
      Broadcast(*a, *b, *out, [](float x, float y) { return x / y; });
      break;
    case TokenType::kPow:
      Broadcast(*a, *b, *out, [](float x, float y) { return std::pow(x, y); });
      break;
    default:
      throw Error(fmt::format("'{}' is not a function of two arguments", TokenTypeName(function)));
  }
  return out;
}

sftensor TensorElementUnary(TokenType function, const sftensor& input) {
  if (!input || input->empty()) {
    throw ShapeError(fmt::format("{}: the argument is empty", TokenTypeName(function)));
  }
  switch (function) {
    case TokenType::kNeg:
      return Map(input, [](float x) { return -x; });
    case TokenType::kExp:
      return Map(input, [](float x) { return std::exp(x); });
    case TokenType::kLog:
      return Map(input, [](float x) { return std::log(x); });
    case TokenType::kSqrt:
      return Map(input, [](float x) { return std::sqrt(x); });
    case TokenType::kRsqrt:
      return Map(input, [](float x) { return 1.f / std::sqrt(x); });
    case TokenType::kAbs:
      return Map(input, [](float x) { return std::fabs(x); });
    case TokenType::kSin:
    case TokenType::kCos:
      return TensorElementTrig(function, input);  // lab course7_expression
    default:
      throw Error(fmt::format("'{}' is not a function of one argument", TokenTypeName(function)));
  }
}

std::vector<sftensor> EvaluateReversePolish(const std::vector<const TokenNode*>& rpn,
                                            const std::vector<std::vector<sftensor>>& operands,
                                            size_t batch) {
  std::vector<std::vector<sftensor>> stack;
  for (const TokenNode* node : rpn) {
    const int arity = FunctionArity(node->type);
    if (node->type == TokenType::kInput) {
      const int index = node->input_index;
      if (index < 0 || static_cast<size_t>(index) >= operands.size() ||
          operands[index].size() != batch) {
        throw ShapeError(
            fmt::format("operand @{} is missing or does not hold {} tensors", index, batch));
      }
      stack.push_back(operands[index]);
    } else if (node->type == TokenType::kNumber) {
      // One shared tensor for the whole batch: functions never modify arguments.
      sftensor scalar = TensorCreate({1});
      scalar->index(0) = node->value;
      stack.emplace_back(batch, scalar);
    } else if (arity == 2 || arity == 1) {
      if (stack.size() < static_cast<size_t>(arity)) {
        throw Error(fmt::format("reverse Polish: '{}' lacks arguments", TokenTypeName(node->type)));
      }
      // The first argument was pushed first, so it lies below the second.
      std::vector<sftensor> second = arity == 2 ? std::move(stack.back()) : std::vector<sftensor>{};
      if (arity == 2) stack.pop_back();
      std::vector<sftensor> first = std::move(stack.back());
      stack.pop_back();
      std::vector<sftensor> result(batch);
      ForEachItem(batch, [&](int i) {
        result[i] = arity == 2 ? TensorElementBinary(node->type, first[i], second[i])
                               : TensorElementUnary(node->type, first[i]);
      });
      stack.push_back(std::move(result));
    } else {
      throw Error(fmt::format("reverse Polish: unexpected token {}", TokenTypeName(node->type)));
    }
  }
  if (stack.size() != 1) {
    throw Error(fmt::format("reverse Polish leaves {} values instead of 1", stack.size()));
  }
  return std::move(stack.back());
}

}  // namespace kuiper
