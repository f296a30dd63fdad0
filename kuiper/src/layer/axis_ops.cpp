// Layers that act along one dimension, or copy elements by index, of every
// item. `dim` always counts the batch as dimension 0 (negative from the end,
// as in PyTorch) and may not be the batch: the engine never mixes items.
//   F.log_softmax (dim)         x - max - log(sum e^(x - max)) along dim
//   kuiper.Hardmax (dim)        1 at the first maximum along dim, 0 elsewhere
//                               (ONNX Hardmax; PyTorch has no such function)
//   torch.cumsum (dim)          running sums along dim; ONNX's `exclusive` and
//                               `reverse` as optional extra bool parameters
//   torch.triu / torch.tril     (diagonal) keep the upper / lower triangle of
//                               the last two dimensions, zero the rest
//   torch.index_select (dim, index)  the slices at `index` (an int array
//                               parameter here, negative from the end) along dim;
//                               with a second input, that operand (1-D) is the index
//   torch.gather (dim, index, index_shape)  ONNX GatherElements, the index
//                               fixed at load time (an int array parameter), or
//                               a second operand of the input's rank
//   torch.numel                 the element count of the item (ONNX Size)
//   Tensor.expand (shape)       NumPy broadcasting to `shape` (with the batch;
//                               -1 keeps a dimension); an item of lower rank is
//                               aligned to the right
//   Tensor.repeat (sizes)       tiles each dimension sizes[d] times (batch: 1)
//   F.pad (pad, mode, value)    pad in PyTorch's order (last dimension first,
//                               (before, after) pairs; negative crops); mode
//                               constant, reflect, replicate or circular
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "row_major_item.hpp"
#include "two_operand_common.hpp"

namespace kuiper {
namespace {

enum class AxisOp { kLogSoftmax, kHardmax, kCumSum };

class AlongAxisLayer : public RowMajorItemLayer {
 public:
  AlongAxisLayer(AxisOp op, int dim, bool exclusive, bool reverse)
      : RowMajorItemLayer("AlongAxis"),
        op_(op),
        dim_(dim),
        exclusive_(exclusive),
        reverse_(reverse) {}

 protected:
  bool Compute(const std::vector<uint32_t>& shape, const std::vector<float>& in,
               std::vector<uint32_t>& out_shape, std::vector<float>& out) const override {
    const int d = ItemDim(dim_, shape.size());
    if (d < 0) return false;
    const RowMajorAxis axis = LocateRowMajorAxis(shape, d);
    out_shape = shape;
    out.assign(in.size(), 0.f);
    const uint64_t n = axis.length, step = axis.inner;
    for (uint64_t o = 0; o < axis.outer; ++o) {
      for (uint64_t i = 0; i < axis.inner; ++i) {
        const uint64_t base = o * n * step + i;
        const auto at = [&](uint64_t k) { return base + k * step; };
        if (op_ == AxisOp::kCumSum) {
          double sum = 0;
          for (uint64_t j = 0; j < n; ++j) {
            const uint64_t k = reverse_ ? n - 1 - j : j;
            if (exclusive_) out[at(k)] = static_cast<float>(sum);
            sum += in[at(k)];
            if (!exclusive_) out[at(k)] = static_cast<float>(sum);
          }
          continue;
        }
        uint64_t best = 0;
        for (uint64_t k = 1; k < n; ++k) {
          if (in[at(k)] > in[at(best)]) best = k;
        }
        if (op_ == AxisOp::kHardmax) {
          out[at(best)] = 1.f;
          continue;
        }
        const double max = in[at(best)];
        double sum = 0;
        for (uint64_t k = 0; k < n; ++k) sum += std::exp(in[at(k)] - max);
        const double log_sum = std::log(sum);
        for (uint64_t k = 0; k < n; ++k) {
          out[at(k)] = static_cast<float>(in[at(k)] - max - log_sum);
        }
      }
    }
    return true;
  }

 private:
  AxisOp op_;
  int dim_;
  bool exclusive_, reverse_;
};

class TriangleLayer : public RowMajorItemLayer {
 public:
  TriangleLayer(bool upper, int diagonal)
      : RowMajorItemLayer(upper ? "Triu" : "Tril"), upper_(upper), diagonal_(diagonal) {}

 protected:
  bool Compute(const std::vector<uint32_t>& shape, const std::vector<float>& in,
               std::vector<uint32_t>& out_shape, std::vector<float>& out) const override {
    if (shape.size() < 2) return false;
    const int64_t rows = shape[shape.size() - 2], cols = shape.back();
    out_shape = shape;
    out = in;
    for (uint64_t e = 0; e < out.size(); ++e) {
      const int64_t c = static_cast<int64_t>(e % cols), r = static_cast<int64_t>(e / cols % rows);
      const bool keep = upper_ ? c - r >= diagonal_ : c - r <= diagonal_;
      if (!keep) out[e] = 0.f;
    }
    return true;
  }

 private:
  bool upper_;
  int64_t diagonal_;
};

// The slices at `index` (negative from the end) along item dimension `d`;
// false when an index is out of range.
bool IndexSelectAlong(const std::vector<uint32_t>& shape, const std::vector<float>& in, int d,
                      const std::vector<int64_t>& index, std::vector<uint32_t>& out_shape,
                      std::vector<float>& out) {
  const RowMajorAxis axis = LocateRowMajorAxis(shape, d);
  const int64_t n = static_cast<int64_t>(axis.length);
  std::vector<uint64_t> picked;
  for (int64_t index_value : index) {
    const int64_t k = index_value < 0 ? index_value + n : index_value;
    if (k < 0 || k >= n) return false;
    picked.push_back(static_cast<uint64_t>(k));
  }
  out_shape = shape;
  out_shape[d] = static_cast<uint32_t>(picked.size());
  out.resize(axis.outer * picked.size() * axis.inner);
  float* y = out.data();
  for (uint64_t o = 0; o < axis.outer; ++o) {
    for (uint64_t k : picked) {
      const float* x = in.data() + (o * axis.length + k) * axis.inner;
      y = std::copy(x, x + axis.inner, y);
    }
  }
  return true;
}

class IndexSelectLayer : public RowMajorItemLayer {
 public:
  IndexSelectLayer(int dim, const std::vector<int>& index)
      : RowMajorItemLayer("IndexSelect"), dim_(dim), index_(index.begin(), index.end()) {}

 protected:
  bool Compute(const std::vector<uint32_t>& shape, const std::vector<float>& in,
               std::vector<uint32_t>& out_shape, std::vector<float>& out) const override {
    const int d = ItemDim(dim_, shape.size());
    return d >= 0 && IndexSelectAlong(shape, in, d, index_, out_shape, out);
  }

 private:
  int dim_;
  std::vector<int64_t> index_;
};

// torch.index_select(input, dim, index) with the index an operand (ONNX
// Gather with indices computed at run time): item n of the output selects
// from item n of the input the slices item n of `index` names. The index
// item is 1-D of integers carried as floats (a non-integer or one out of
// range is a shape error).
class IndexSelectOperandLayer : public TwoOperandLayer {
 public:
  explicit IndexSelectOperandLayer(int dim) : TwoOperandLayer("IndexSelect"), dim_(dim) {}

 protected:
  InferStatus ForwardItem(const ftensor& a, const ftensor& b, sftensor& output) const override {
    const std::vector<uint32_t> shape = a.raw_shapes();
    const int d = ItemDim(dim_, shape.size());
    if (d < 0 || b.raw_shapes().size() != 1) return InferStatus::kInferFailedShapeError;
    std::vector<int64_t> index;
    for (float v : b.values(/*row_major=*/true)) {
      if (v != std::floor(v) || std::abs(v) > 2e9f) return InferStatus::kInferFailedShapeError;
      index.push_back(static_cast<int64_t>(v));
    }
    std::vector<uint32_t> out_shape;
    std::vector<float> out;
    if (!IndexSelectAlong(shape, a.values(/*row_major=*/true), d, index, out_shape, out)) {
      return InferStatus::kInferFailedShapeError;
    }
    EnsureOutput(output, out_shape);
    output->Fill(out, /*row_major=*/true);
    return InferStatus::kInferSuccess;
  }

 private:
  int dim_;
};

// torch.gather along `dim`: out[i] = in[i with index dim replaced by
// index[i]], the index (row-major, negative from the end) of the output's
// shape `index_shape` (without the batch), both fixed when loading.
// out[e] = in[the position of e with its index along `d` replaced by
// index[e]] for the `index` of `index_shape` (the output's shape, of `shape`'s
// rank); false when an index is out of range.
bool GatherAlong(const std::vector<uint32_t>& shape, const std::vector<float>& in, int d,
                 const std::vector<int64_t>& index, const std::vector<uint32_t>& index_shape,
                 std::vector<float>& out) {
  if (index_shape.size() != shape.size()) return false;
  std::vector<uint64_t> stride(shape.size(), 1);
  for (size_t k = shape.size() - 1; k > 0; --k) stride[k - 1] = stride[k] * shape[k];
  out.resize(index.size());
  std::vector<uint32_t> at(shape.size(), 0);
  for (size_t e = 0; e < index.size(); ++e) {
    int64_t j = index[e];
    if (j < 0) j += shape[d];
    if (j < 0 || j >= int64_t{shape[d]}) return false;
    uint64_t offset = 0;
    for (size_t k = 0; k < shape.size(); ++k) {
      const uint64_t i = static_cast<int>(k) == d ? static_cast<uint64_t>(j) : at[k];
      if (i >= shape[k]) return false;
      offset += i * stride[k];
    }
    out[e] = in[offset];
    for (size_t k = shape.size(); k-- > 0;) {
      if (++at[k] < index_shape[k]) break;
      at[k] = 0;
    }
  }
  return true;
}

class GatherLayer : public RowMajorItemLayer {
 public:
  GatherLayer(int dim, const std::vector<int>& index, const std::vector<int>& index_shape)
      : RowMajorItemLayer("Gather"),
        dim_(dim),
        index_(index.begin(), index.end()),
        index_shape_(index_shape.begin(), index_shape.end()) {}

 protected:
  bool Compute(const std::vector<uint32_t>& shape, const std::vector<float>& in,
               std::vector<uint32_t>& out_shape, std::vector<float>& out) const override {
    const int d = ItemDim(dim_, shape.size());
    out_shape = index_shape_;
    return d >= 0 && GatherAlong(shape, in, d, index_, index_shape_, out);
  }

 private:
  int dim_;
  std::vector<int64_t> index_;
  std::vector<uint32_t> index_shape_;
};

// torch.gather(input, dim, index) with the index an operand (ONNX
// GatherElements with indices computed at run time): item n of the index, of
// item n of the input's rank, picks from item n of the input; the output has
// the index's shape.
class GatherOperandLayer : public TwoOperandLayer {
 public:
  explicit GatherOperandLayer(int dim) : TwoOperandLayer("Gather"), dim_(dim) {}

 protected:
  InferStatus ForwardItem(const ftensor& a, const ftensor& b, sftensor& output) const override {
    const std::vector<uint32_t> shape = a.raw_shapes();
    const int d = ItemDim(dim_, shape.size());
    if (d < 0) return InferStatus::kInferFailedShapeError;
    std::vector<int64_t> index;
    for (float v : b.values(/*row_major=*/true)) {
      if (v != std::floor(v) || std::abs(v) > 2e9f) return InferStatus::kInferFailedShapeError;
      index.push_back(static_cast<int64_t>(v));
    }
    std::vector<float> out;
    if (!GatherAlong(shape, a.values(/*row_major=*/true), d, index, b.raw_shapes(), out)) {
      return InferStatus::kInferFailedShapeError;
    }
    EnsureOutput(output, b.raw_shapes());
    output->Fill(out, /*row_major=*/true);
    return InferStatus::kInferSuccess;
  }

 private:
  int dim_;
};

// torch.numel: the element count of each item, as one float.
class NumelLayer : public RowMajorItemLayer {
 public:
  NumelLayer() : RowMajorItemLayer("Numel") {}

 protected:
  bool Compute(const std::vector<uint32_t>&, const std::vector<float>& in,
               std::vector<uint32_t>& out_shape, std::vector<float>& out) const override {
    out_shape = {1};
    out = {static_cast<float>(in.size())};
    return true;
  }
};

// Expand, repeat and pad: every output element copies one input element (or
// is the pad value); `Source` gives the input index along one dimension for
// an output index, or -1 for the pad value.
class IndexMapLayer : public RowMajorItemLayer {
 public:
  enum class Kind { kExpand, kRepeat, kPad };
  IndexMapLayer(Kind kind, std::vector<int> sizes, std::string mode, float value)
      : RowMajorItemLayer("IndexMap"),
        kind_(kind),
        sizes_(std::move(sizes)),
        mode_(std::move(mode)),
        value_(value) {}

 protected:
  bool Compute(const std::vector<uint32_t>& shape, const std::vector<float>& in,
               std::vector<uint32_t>& out_shape, std::vector<float>& out) const override {
    std::vector<uint32_t> in_shape = shape;
    std::vector<int64_t> before(shape.size(), 0);  // kPad: elements added before
    if (kind_ == Kind::kPad) {
      if (sizes_.size() % 2 != 0 || sizes_.size() / 2 > shape.size()) return false;
      out_shape = shape;
      for (size_t j = 0; j < sizes_.size() / 2; ++j) {
        const size_t d = shape.size() - 1 - j;
        const int64_t size = int64_t{shape[d]} + sizes_[2 * j] + sizes_[2 * j + 1];
        if (size < 1) return false;
        // Reflection needs at least one element past each border.
        if (mode_ == "reflect" &&
            (sizes_[2 * j] >= int64_t{shape[d]} || sizes_[2 * j + 1] >= int64_t{shape[d]})) {
          return false;
        }
        out_shape[d] = static_cast<uint32_t>(size);
        before[d] = sizes_[2 * j];
      }
    } else {
      // sizes_ counts the batch first; the item dims are the rest.
      if (sizes_.size() < 2 || sizes_.size() - 1 < shape.size()) return false;
      const size_t rank = sizes_.size() - 1;
      in_shape.insert(in_shape.begin(), rank - shape.size(), 1);  // aligned to the right
      before.assign(rank, 0);  // one per output dimension (found by ASan: it had the input's rank)
      out_shape.assign(rank, 0);
      for (size_t d = 0; d < rank; ++d) {
        const int s = sizes_[d + 1];
        if (kind_ == Kind::kRepeat) {
          if (s < 1) return false;
          out_shape[d] = in_shape[d] * static_cast<uint32_t>(s);
        } else if (s == -1) {
          out_shape[d] = in_shape[d];
        } else {
          if (s < 1 || (in_shape[d] != 1 && in_shape[d] != static_cast<uint32_t>(s))) {
            return false;
          }
          out_shape[d] = static_cast<uint32_t>(s);
        }
      }
    }
    const size_t rank = out_shape.size();
    std::vector<uint64_t> in_stride(rank, 1);
    for (size_t d = rank - 1; d > 0; --d) in_stride[d - 1] = in_stride[d] * in_shape[d];
    uint64_t count = 1;
    for (uint32_t s : out_shape) count *= s;
    out.resize(count);
    std::vector<uint32_t> index(rank, 0);
    for (uint64_t e = 0; e < count; ++e) {
      uint64_t offset = 0;
      bool pad = false;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t k = Source(index[d], in_shape[d], before[d]);
        if (k < 0) {
          pad = true;
          break;
        }
        offset += static_cast<uint64_t>(k) * in_stride[d];
      }
      out[e] = pad ? value_ : in[offset];
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < out_shape[d]) break;
        index[d] = 0;
      }
    }
    return true;
  }

 private:
  int64_t Source(int64_t o, int64_t n, int64_t before) const {
    if (kind_ == Kind::kExpand) return n == 1 ? 0 : o;
    if (kind_ == Kind::kRepeat) return o % n;
    int64_t i = o - before;
    if (i >= 0 && i < n) return i;
    if (mode_ == "constant") return -1;
    if (mode_ == "replicate") return std::clamp<int64_t>(i, 0, n - 1);
    if (mode_ == "circular") return ((i % n) + n) % n;
    // reflect (without repeating the border element), as often as it takes
    if (n == 1) return 0;
    const int64_t period = 2 * (n - 1);
    i = ((i % period) + period) % period;
    return i < n ? i : period - i;
  }

  Kind kind_;
  std::vector<int> sizes_;
  std::string mode_;
  float value_;
};

void CheckNotBatch(const RuntimeOperator& op, int dim) {
  if (dim == 0) {
    throw LayerError(
        fmt::format("operator '{}' ({}): dim=0 would mix the items of a batch", op.name, op.type));
  }
}

std::unique_ptr<Layer> CreateAlongAxis(const RuntimeOperator& op) {
  const int dim = op.param<int>("dim");
  CheckNotBatch(op, dim);
  const AxisOp kind = op.type == "F.log_softmax"    ? AxisOp::kLogSoftmax
                      : op.type == "kuiper.Hardmax" ? AxisOp::kHardmax
                                                    : AxisOp::kCumSum;
  return std::make_unique<AlongAxisLayer>(kind, dim, BoolParamOr(op, "exclusive", false),
                                          BoolParamOr(op, "reverse", false));
}

std::unique_ptr<Layer> CreateTriangle(const RuntimeOperator& op) {
  const int diagonal = op.has_param("diagonal") ? op.param<int>("diagonal") : 0;
  return std::make_unique<TriangleLayer>(op.type == "torch.triu", diagonal);
}

std::unique_ptr<Layer> CreateIndexSelect(const RuntimeOperator& op) {
  const int dim = op.param<int>("dim");
  CheckNotBatch(op, dim);
  if (op.input_operands.size() == 2) return std::make_unique<IndexSelectOperandLayer>(dim);
  const std::vector<int> index = IntListParam(op, "index", {});
  if (index.empty()) {
    throw LayerError(fmt::format(
        "operator '{}' ({}): needs a non-empty int array parameter 'index'", op.name, op.type));
  }
  return std::make_unique<IndexSelectLayer>(dim, index);
}

std::unique_ptr<Layer> CreateGather(const RuntimeOperator& op) {
  const int dim = op.param<int>("dim");
  CheckNotBatch(op, dim);
  if (op.input_operands.size() == 2) return std::make_unique<GatherOperandLayer>(dim);
  const std::vector<int> index = IntListParam(op, "index", {});
  const std::vector<int> shape = IntListParam(op, "index_shape", {});
  int64_t count = 1;
  for (int s : shape) count *= s;
  if (index.empty() || count != static_cast<int64_t>(index.size())) {
    throw LayerError(fmt::format("operator '{}' ({}): needs 'index' values filling 'index_shape'",
                                 op.name, op.type));
  }
  return std::make_unique<GatherLayer>(dim, index, shape);
}

std::unique_ptr<Layer> CreateIndexMap(const RuntimeOperator& op) {
  if (op.type == "F.pad") {
    const std::string mode = op.has_param("mode") ? op.param<std::string>("mode") : "constant";
    if (mode != "constant" && mode != "reflect" && mode != "replicate" && mode != "circular") {
      throw LayerError(
          fmt::format("operator '{}' ({}): mode '{}' is not supported (constant, "
                      "reflect, replicate, circular)",
                      op.name, op.type, mode));
    }
    float value = 0.f;
    if (const auto it = op.params.find("value");
        it != op.params.end() && !std::holds_alternative<std::monostate>(it->second)) {
      value = op.param<float>("value");
    }
    return std::make_unique<IndexMapLayer>(IndexMapLayer::Kind::kPad, IntListParam(op, "pad", {}),
                                           mode, value);
  }
  const bool expand = op.type == "Tensor.expand";
  const std::vector<int> sizes = IntListParam(op, expand ? "shape" : "sizes", {});
  if (sizes.size() < 2 || (sizes[0] != 1 && sizes[0] != -1)) {
    throw LayerError(
        fmt::format("operator '{}' ({}): {}={} must start with the batch (1 or -1) "
                    "and name every item dimension",
                    op.name, op.type, expand ? "shape" : "sizes", ShapeText(sizes)));
  }
  return std::make_unique<IndexMapLayer>(
      expand ? IndexMapLayer::Kind::kExpand : IndexMapLayer::Kind::kRepeat, sizes, "", 0.f);
}

LayerRegistererWrapper kAlongAxisRegistration({"F.log_softmax", "kuiper.Hardmax", "torch.cumsum"},
                                              CreateAlongAxis);
LayerRegistererWrapper kTriangleRegistration({"torch.triu", "torch.tril"}, CreateTriangle);
LayerRegistererWrapper kIndexSelectRegistration({"torch.index_select"}, CreateIndexSelect);
LayerRegistererWrapper kGatherRegistration({"torch.gather"}, CreateGather);
LayerRegistererWrapper kNumelRegistration({"torch.numel"}, [](const RuntimeOperator&) {
  return std::unique_ptr<Layer>(std::make_unique<NumelLayer>());
});
LayerRegistererWrapper kIndexMapRegistration({"Tensor.expand", "Tensor.repeat", "F.pad"},
                                             CreateIndexMap);

}  // namespace
}  // namespace kuiper
