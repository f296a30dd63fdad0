// Reductions along some dimensions of every item, one layer for all of them
// with the operation as a parameter: torch.sum, torch.mean, torch.prod,
// torch.amax, torch.amin, torch.logsumexp and torch.norm (p = 1 or 2), each
// with `dim` (an int or a list, counted with the batch as dimension 0,
// negative from the end; absent: every item dimension) and `keepdim`. And
// torch.argmax / torch.argmin along one `dim`, whose index comes out as a
// float (the engine computes in float32), with ONNX's `select_last_index`
// as an optional extra parameter (ties go to the first index otherwise, as
// in ONNX and NumPy).
//
// Reducing over the batch would mix the items, which the engine keeps apart:
// dim 0 is refused when the layer is created.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "row_major_item.hpp"

namespace kuiper {
namespace {

enum class ReduceOp { kSum, kMean, kProd, kMax, kMin, kLogSumExp, kL1, kL2 };

class ReduceLayer : public RowMajorItemLayer {
 public:
  ReduceLayer(ReduceOp op, std::vector<int> dims, bool keepdim)
      : RowMajorItemLayer("Reduce"), op_(op), dims_(std::move(dims)), keepdim_(keepdim) {}

 protected:
  bool Compute(const std::vector<uint32_t>& shape, const std::vector<float>& in,
               std::vector<uint32_t>& out_shape, std::vector<float>& out) const override {
    const size_t rank = shape.size();
    std::vector<bool> reduced(rank, dims_.empty());
    for (int dim : dims_) {
      const int d = ItemDim(dim, rank);
      if (d < 0) return false;
      reduced[d] = true;
    }
    // Output element of each input element: its index with the reduced
    // dimensions dropped, in row-major order.
    std::vector<uint64_t> out_stride(rank, 0);
    uint64_t count = 1;  // output elements
    for (size_t d = rank; d-- > 0;) {
      if (reduced[d]) continue;
      out_stride[d] = count;
      count *= shape[d];
    }
    uint64_t group = in.size() / count;  // input elements per output element
    out_shape.clear();
    for (size_t d = 0; d < rank; ++d) {
      if (!reduced[d])
        out_shape.push_back(shape[d]);
      else if (keepdim_)
        out_shape.push_back(1);
    }
    // Accumulated in double: a sum of many floats keeps float's precision.
    const double start = op_ == ReduceOp::kProd  ? 1.0
                         : op_ == ReduceOp::kMax ? -std::numeric_limits<double>::infinity()
                         : op_ == ReduceOp::kMin ? std::numeric_limits<double>::infinity()
                                                 : 0.0;
    std::vector<double> acc(count, start);
    std::vector<double> max;  // logsumexp: max of each group first, for stability
    if (op_ == ReduceOp::kLogSumExp) max.assign(count, -std::numeric_limits<double>::infinity());
    for (int pass = op_ == ReduceOp::kLogSumExp ? 0 : 1; pass < 2; ++pass) {
      std::vector<uint32_t> index(rank, 0);
      for (uint64_t e = 0; e < in.size(); ++e) {
        uint64_t o = 0;
        for (size_t d = 0; d < rank; ++d) o += index[d] * out_stride[d];
        const double x = in[e];
        if (pass == 0) {
          max[o] = std::max(max[o], x);
        } else {
          switch (op_) {
            case ReduceOp::kSum:
            case ReduceOp::kMean:
              acc[o] += x;
              break;
            case ReduceOp::kProd:
              acc[o] *= x;
              break;
            case ReduceOp::kMax:
              acc[o] = std::isnan(x) || std::isnan(acc[o]) ? NAN : std::max(acc[o], x);
              break;
            case ReduceOp::kMin:
              acc[o] = std::isnan(x) || std::isnan(acc[o]) ? NAN : std::min(acc[o], x);
              break;
            case ReduceOp::kLogSumExp:
              acc[o] += std::isinf(max[o]) ? std::exp(x) : std::exp(x - max[o]);
              break;
            case ReduceOp::kL1:
              acc[o] += std::abs(x);
              break;
            case ReduceOp::kL2:
              acc[o] += x * x;
              break;
          }
        }
        for (size_t d = rank; d-- > 0;) {
          if (++index[d] < shape[d]) break;
          index[d] = 0;
        }
      }
    }
    out.resize(count);
    for (uint64_t o = 0; o < count; ++o) {
      double y = acc[o];
      if (op_ == ReduceOp::kMean) y /= static_cast<double>(group);
      if (op_ == ReduceOp::kL2) y = std::sqrt(y);
      if (op_ == ReduceOp::kLogSumExp) y = std::log(y) + (std::isinf(max[o]) ? 0.0 : max[o]);
      out[o] = static_cast<float>(y);
    }
    return true;
  }

 private:
  ReduceOp op_;
  std::vector<int> dims_;
  bool keepdim_;
};

class ArgExtremeLayer : public RowMajorItemLayer {
 public:
  ArgExtremeLayer(bool max, int dim, bool keepdim, bool last)
      : RowMajorItemLayer(max ? "ArgMax" : "ArgMin"),
        max_(max),
        dim_(dim),
        keepdim_(keepdim),
        last_(last) {}

 protected:
  bool Compute(const std::vector<uint32_t>& shape, const std::vector<float>& in,
               std::vector<uint32_t>& out_shape, std::vector<float>& out) const override {
    const int d = ItemDim(dim_, shape.size());
    if (d < 0) return false;
    const RowMajorAxis axis = LocateRowMajorAxis(shape, d);
    out_shape = shape;
    if (keepdim_)
      out_shape[d] = 1;
    else
      out_shape.erase(out_shape.begin() + d);
    out.resize(axis.outer * axis.inner);
    for (uint64_t o = 0; o < axis.outer; ++o) {
      for (uint64_t i = 0; i < axis.inner; ++i) {
        const float* line = in.data() + o * axis.length * axis.inner + i;
        uint64_t best = 0;
        for (uint64_t k = 1; k < axis.length; ++k) {
          const float x = line[k * axis.inner], b = line[best * axis.inner];
          const bool better = max_ ? (x > b || (last_ && x == b)) : (x < b || (last_ && x == b));
          if (better) best = k;
        }
        out[o * axis.inner + i] = static_cast<float>(best);
      }
    }
    return true;
  }

 private:
  bool max_;
  int dim_;
  bool keepdim_, last_;
};

std::unique_ptr<Layer> CreateReduce(const RuntimeOperator& op) {
  static const std::map<std::string, ReduceOp> ops = {
      {"torch.sum", ReduceOp::kSum},   {"torch.mean", ReduceOp::kMean},
      {"torch.prod", ReduceOp::kProd}, {"torch.amax", ReduceOp::kMax},
      {"torch.amin", ReduceOp::kMin},  {"torch.logsumexp", ReduceOp::kLogSumExp},
      {"torch.norm", ReduceOp::kL2}};
  ReduceOp kind = ops.at(op.type);
  if (kind == ReduceOp::kL2 && op.has_param("p")) {
    const float p = op.param<float>("p");
    if (p == 1)
      kind = ReduceOp::kL1;
    else if (p != 2)
      throw LayerError(
          fmt::format("operator '{}' ({}): p={} is not supported (1, 2)", op.name, op.type, p));
  }
  const std::vector<int> dims = IntListParam(op, "dim", {});
  for (int dim : dims) {
    if (dim == 0) {
      throw LayerError(
          fmt::format("operator '{}' ({}): dim={} includes 0, the batch, whose "
                      "items the engine never mixes",
                      op.name, op.type, ShapeText(dims)));
    }
  }
  return std::make_unique<ReduceLayer>(kind, dims, BoolParamOr(op, "keepdim", false));
}

std::unique_ptr<Layer> CreateArgExtreme(const RuntimeOperator& op) {
  const int dim = op.param<int>("dim");
  if (dim == 0) {
    throw LayerError(
        fmt::format("operator '{}' ({}): dim=0 would mix the items of a batch", op.name, op.type));
  }
  return std::make_unique<ArgExtremeLayer>(op.type == "torch.argmax", dim,
                                           BoolParamOr(op, "keepdim", false),
                                           BoolParamOr(op, "select_last_index", false));
}

LayerRegistererWrapper kReduceRegistration({"torch.sum", "torch.mean", "torch.prod", "torch.amax",
                                            "torch.amin", "torch.logsumexp", "torch.norm"},
                                           CreateReduce);
LayerRegistererWrapper kArgExtremeRegistration({"torch.argmax", "torch.argmin"}, CreateArgExtreme);

}  // namespace
}  // namespace kuiper
