// The element-wise functions of an expression, with NumPy broadcasting
// between the arguments of a function, and their application to a batch
// (ApplyFunction). The stack machine that evaluates the reverse Polish is
// lab course7_expression's EvaluateReversePolish.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {

namespace {

// Large element-wise loops share their elements among the threads (inside a
// batch loop's body they run on the calling thread: parallel.hpp).
bool SplitElements(int64_t size) { return size >= (int64_t{1} << 16); }

// Storage strides of each dimension of `t` seen as a tensor of `rank`
// dimensions (rank >= t's rank) under NumPy broadcasting: the shape is
// aligned to the last dimension, and a dimension of size 1 (or a missing
// leading one) gets stride 0, so it is read at index 0 for every index of
// the other side. The storage (tensor.hpp): rows step 1, cols step rows, and
// the leading dimensions step through whole channels, the last one fastest.
std::vector<uint64_t> BroadcastStrides(const ftensor& t, size_t rank) {
  const std::vector<uint32_t>& shape = t.raw_shapes();
  const size_t k = shape.size();
  std::vector<uint64_t> stride(k, 1);
  if (k >= 2) {
    stride[k - 1] = t.rows();
    uint64_t channel = uint64_t{t.rows()} * t.cols();
    for (size_t d = k - 2; d-- > 0;) {
      stride[d] = channel;
      channel *= shape[d];
    }
  }
  std::vector<uint64_t> out(rank, 0);
  for (size_t d = 0; d < k; ++d) out[d + rank - k] = shape[d] == 1 ? 0 : stride[d];
  return out;
}

// out = op(a, b) with NumPy broadcasting; out has the broadcast shape.
template <typename Op>
void Broadcast(const ftensor& a, const ftensor& b, ftensor& out, Op op) {
  const float* x = a.raw_ptr();
  const float* y = b.raw_ptr();
  float* z = out.raw_ptr();
  if (a.shapes() == b.shapes()) {  // the common case: no index arithmetic
    const int64_t size = out.size();
    ParallelFor(
        size, [&](int64_t i) { z[i] = op(x[i], y[i]); }, SplitElements(size));
    return;
  }
  const std::vector<uint32_t>& shape = out.raw_shapes();
  const size_t rank = shape.size();
  const std::vector<uint64_t> sa = BroadcastStrides(a, rank), sb = BroadcastStrides(b, rank);
  // The output's dimensions in storage order, fastest first: rows, cols, then
  // the leading dimensions from the last to the first (a 1-D tensor: cols).
  std::vector<size_t> order;
  if (rank == 1) {
    order = {0};
  } else {
    order = {rank - 2, rank - 1};
    for (size_t d = rank - 2; d-- > 0;) order.push_back(d);
  }
  const size_t fast = order[0];
  const uint32_t run = shape[fast];
  std::vector<uint32_t> index(rank, 0);  // of the dimensions in order[1..]
  uint64_t ia = 0, ib = 0;               // storage offsets of the run's first element
  for (uint64_t runs = out.size() / run; runs-- > 0;) {
    for (uint32_t i = 0; i < run; ++i) *z++ = op(x[ia + i * sa[fast]], y[ib + i * sb[fast]]);
    for (size_t p = 1; p < order.size(); ++p) {  // the next run: an odometer over order[1..]
      const size_t d = order[p];
      if (++index[d] < shape[d]) {
        ia += sa[d];
        ib += sb[d];
        break;
      }
      ia -= sa[d] * (shape[d] - 1);
      ib -= sb[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

// where(c, a, b) with NumPy broadcasting: Broadcast's loop over three operands.
void ExprBroadcastWhere(const ftensor& c, const ftensor& a, const ftensor& b, ftensor& out) {
  const float* pc = c.raw_ptr();
  const float* pa = a.raw_ptr();
  const float* pb = b.raw_ptr();
  float* z = out.raw_ptr();
  const std::vector<uint32_t>& shape = out.raw_shapes();
  const size_t rank = shape.size();
  const std::vector<uint64_t> sc = BroadcastStrides(c, rank), sa = BroadcastStrides(a, rank),
                              sb = BroadcastStrides(b, rank);
  std::vector<size_t> order;
  if (rank == 1) {
    order = {0};
  } else {
    order = {rank - 2, rank - 1};
    for (size_t d = rank - 2; d-- > 0;) order.push_back(d);
  }
  const size_t fast = order[0];
  const uint32_t run = shape[fast];
  std::vector<uint32_t> index(rank, 0);
  uint64_t ic = 0, ia = 0, ib = 0;
  for (uint64_t runs = out.size() / run; runs-- > 0;) {
    for (uint32_t i = 0; i < run; ++i) {
      *z++ = pc[ic + i * sc[fast]] != 0 ? pa[ia + i * sa[fast]] : pb[ib + i * sb[fast]];
    }
    for (size_t p = 1; p < order.size(); ++p) {
      const size_t d = order[p];
      if (++index[d] < shape[d]) {
        ic += sc[d];
        ia += sa[d];
        ib += sb[d];
        break;
      }
      ic -= sc[d] * (shape[d] - 1);
      ia -= sa[d] * (shape[d] - 1);
      ib -= sb[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

// The NumPy broadcast of two logical shapes, or ShapeError naming `function`.
std::vector<uint32_t> ExprBroadcastShape(TokenType function, const std::vector<uint32_t>& ra,
                                         const std::vector<uint32_t>& rb) {
  const size_t rank = std::max(ra.size(), rb.size());
  // Aligned from the last dimension; a missing leading dimension is 1.
  std::vector<uint32_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    const uint32_t da = d + ra.size() >= rank ? ra[d + ra.size() - rank] : 1;
    const uint32_t db = d + rb.size() >= rank ? rb[d + rb.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) {
      throw ShapeError(fmt::format("{}: shapes {} and {} do not broadcast", TokenTypeName(function),
                                   ShapeText(ra), ShapeText(rb)));
    }
    shape[d] = std::max(da, db);
  }
  return shape;
}

float ExprTruth(bool value) { return value ? 1.f : 0.f; }

template <typename Op>
sftensor Map(const sftensor& input, Op op) {
  sftensor out = TensorCreate(input->raw_shapes());
  const float* x = input->raw_ptr();
  float* y = out->raw_ptr();
  const int64_t size = input->size();
  ParallelFor(
      size, [&](int64_t i) { y[i] = op(x[i]); }, SplitElements(size));
  return out;
}

// Runs fn(i) for every item, items in parallel.
template <typename Fn>
void ForEachItem(size_t batch, Fn fn) {
  if (batch == 1) return fn(0);  // the element loops share one item among the threads
  ParallelForEach(static_cast<int64_t>(batch), fn);
}

}  // namespace

sftensor TensorElementBinary(TokenType function, const sftensor& a, const sftensor& b,
                             const sftensor& into) {
  if (!a || !b || a->empty() || b->empty()) {
    throw ShapeError(fmt::format("{}: an argument is empty", TokenTypeName(function)));
  }
  std::vector<uint32_t> shape = ExprBroadcastShape(function, a->raw_shapes(), b->raw_shapes());
  // Never into an argument: a broadcast argument is read again after its
  // elements would have been overwritten.
  const bool reuse = into && into->raw_shapes() == shape && into->raw_ptr() != a->raw_ptr() &&
                     into->raw_ptr() != b->raw_ptr();
  sftensor out = reuse ? into : TensorCreate(std::move(shape));
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
    case TokenType::kMax:
      Broadcast(*a, *b, *out, [](float x, float y) { return x != x || x > y ? x : y; });
      break;
    case TokenType::kMin:
      Broadcast(*a, *b, *out, [](float x, float y) { return x != x || x < y ? x : y; });
      break;
    case TokenType::kFmod:
      Broadcast(*a, *b, *out, [](float x, float y) { return std::fmod(x, y); });
      break;
    case TokenType::kRemainder:
      Broadcast(*a, *b, *out, [](float x, float y) {
        const float r = std::fmod(x, y);
        return r != 0 && (r < 0) != (y < 0) ? r + y : r;
      });
      break;
    case TokenType::kEq:
      Broadcast(*a, *b, *out, [](float x, float y) { return ExprTruth(x == y); });
      break;
    case TokenType::kNe:
      Broadcast(*a, *b, *out, [](float x, float y) { return ExprTruth(x != y); });
      break;
    case TokenType::kLt:
      Broadcast(*a, *b, *out, [](float x, float y) { return ExprTruth(x < y); });
      break;
    case TokenType::kGt:
      Broadcast(*a, *b, *out, [](float x, float y) { return ExprTruth(x > y); });
      break;
    case TokenType::kLe:
      Broadcast(*a, *b, *out, [](float x, float y) { return ExprTruth(x <= y); });
      break;
    case TokenType::kGe:
      Broadcast(*a, *b, *out, [](float x, float y) { return ExprTruth(x >= y); });
      break;
    case TokenType::kAnd:
      Broadcast(*a, *b, *out, [](float x, float y) { return ExprTruth(x != 0 && y != 0); });
      break;
    case TokenType::kOr:
      Broadcast(*a, *b, *out, [](float x, float y) { return ExprTruth(x != 0 || y != 0); });
      break;
    case TokenType::kXor:
      Broadcast(*a, *b, *out, [](float x, float y) { return ExprTruth((x != 0) != (y != 0)); });
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
    case TokenType::kTanh:
      return Map(input, [](float x) { return std::tanh(x); });
    case TokenType::kFloor:
      return Map(input, [](float x) { return std::floor(x); });
    case TokenType::kCeil:
      return Map(input, [](float x) { return std::ceil(x); });
    case TokenType::kRound:
      // nearbyint rounds in the current mode, round-to-nearest-even by default.
      return Map(input, [](float x) { return std::nearbyint(x); });
    case TokenType::kTrunc:
      return Map(input, [](float x) { return std::trunc(x); });
    case TokenType::kSign:
      return Map(input, [](float x) { return x > 0 ? 1.f : x < 0 ? -1.f : x; });
    case TokenType::kErf:
      return Map(input, [](float x) { return std::erf(x); });
    case TokenType::kTan:
      return Map(input, [](float x) { return std::tan(x); });
    case TokenType::kSinh:
      return Map(input, [](float x) { return std::sinh(x); });
    case TokenType::kCosh:
      return Map(input, [](float x) { return std::cosh(x); });
    case TokenType::kAsin:
      return Map(input, [](float x) { return std::asin(x); });
    case TokenType::kAcos:
      return Map(input, [](float x) { return std::acos(x); });
    case TokenType::kAtan:
      return Map(input, [](float x) { return std::atan(x); });
    case TokenType::kAsinh:
      return Map(input, [](float x) { return std::asinh(x); });
    case TokenType::kAcosh:
      return Map(input, [](float x) { return std::acosh(x); });
    case TokenType::kAtanh:
      return Map(input, [](float x) { return std::atanh(x); });
    case TokenType::kNot:
      return Map(input, [](float x) { return ExprTruth(x == 0); });
    default:
      throw Error(fmt::format("'{}' is not a function of one argument", TokenTypeName(function)));
  }
}

sftensor TensorElementWhere(const sftensor& condition, const sftensor& a, const sftensor& b) {
  if (!condition || !a || !b || condition->empty() || a->empty() || b->empty()) {
    throw ShapeError("where: an argument is empty");
  }
  // Broadcasting is associative: the shape of all three is that of c with (a with b).
  const std::vector<uint32_t> ab =
      ExprBroadcastShape(TokenType::kWhere, a->raw_shapes(), b->raw_shapes());
  sftensor out = TensorCreate(ExprBroadcastShape(TokenType::kWhere, condition->raw_shapes(), ab));
  ExprBroadcastWhere(*condition, *a, *b, *out);
  return out;
}

std::vector<sftensor> ApplyFunction(TokenType function,
                                    const std::vector<std::vector<sftensor>>& arguments,
                                    size_t batch, const std::vector<sftensor>* into) {
  const int arity = FunctionArity(function);
  if (arity == 0 || arguments.size() != static_cast<size_t>(arity)) {
    throw std::invalid_argument(fmt::format("ApplyFunction: '{}' takes {} argument(s), given {}",
                                            TokenTypeName(function), arity, arguments.size()));
  }
  for (const std::vector<sftensor>& argument : arguments) {
    if (argument.size() != batch) {
      throw std::invalid_argument(
          fmt::format("ApplyFunction: '{}': an argument holds {} item(s), "
                      "not {}",
                      TokenTypeName(function), argument.size(), batch));
    }
  }
  if (into && into->size() != batch) into = nullptr;
  std::vector<sftensor> result(batch);
  ForEachItem(batch, [&](int i) {
    const std::vector<sftensor>& a = arguments[0];
    if (arity == 3) {
      result[i] = TensorElementWhere(a[i], arguments[1][i], arguments[2][i]);
    } else if (arity == 2) {
      result[i] = TensorElementBinary(function, a[i], arguments[1][i], into ? (*into)[i] : nullptr);
    } else {
      result[i] = TensorElementUnary(function, a[i]);
    }
  });
  return result;
}

}  // namespace kuiper
