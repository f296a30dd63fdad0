// The two lowerings: MatMul onto dense / reshape / batch matmul, and Upsample
// (and Resize) onto a resize operator. docs/onnx.md walks through an example
// of each MatMul case.
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "converter.hpp"

namespace kuiper::onnx_import {
namespace {

int64_t Product(Shape::const_iterator begin, Shape::const_iterator end) {
  return std::accumulate(begin, end, int64_t{1}, std::multiplies<>());
}

Shape WithoutLeadingOnes(Shape shape) {
  while (!shape.empty() && shape.front() == 1) shape.erase(shape.begin());
  return shape;
}

}  // namespace

void Converter::ConvertMatMul(const onnx::NodeProto& node) {
  if (node.input_size() != 2) {
    Fail(node, fmt::format("MatMul needs exactly 2 inputs (A, B), has {}", node.input_size()));
  }
  const Shape& a_in = ShapeOf(node, node.input(0));
  const Shape& b_in = ShapeOf(node, node.input(1));
  const Shape& y = ShapeOf(node, node.output(0));
  if (a_in.empty() || b_in.empty()) {
    Fail(node, fmt::format("inputs of shapes {} and {}: a scalar is not a matrix", ShapeText(a_in),
                           ShapeText(b_in)));
  }
  // NumPy's rule for vectors: a 1-D A is the row (1, K), a 1-D B the column
  // (K, 1), and that 1 leaves the result again. Row-major, the values are the same.
  const bool a_vector = a_in.size() == 1, b_vector = b_in.size() == 1;
  const Shape a = a_vector ? Shape{1, a_in[0]} : a_in;
  const Shape b = b_vector ? Shape{b_in[0], 1} : b_in;
  const size_t a_rank = a.size(), b_rank = b.size();
  const int64_t m = a[a_rank - 2], k = a[a_rank - 1], n = b[b_rank - 1];
  if (b[b_rank - 2] != k) {
    Fail(node, fmt::format("A {} and B {} do not chain (K differs)", ShapeText(a), ShapeText(b)));
  }
  // final_shape = out_batch + a_shape[a_rank-2 : a_rank-1] + b_shape[b_rank-1 :].
  const Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  Shape out_batch = a_rank > b_rank ? batch_a : batch_b;
  if (a_rank == b_rank) {
    for (size_t i = 0; i < batch_a.size(); ++i) out_batch[i] = std::max(batch_a[i], batch_b[i]);
  }
  Shape final_shape = out_batch;
  if (!a_vector) final_shape.push_back(m);
  if (!b_vector) final_shape.push_back(n);
  if (final_shape != y) {
    Fail(node, fmt::format("the lowered result has shape {}, but the MatMul's output has shape {}",
                           ShapeText(final_shape), ShapeText(y)));
  }
  const std::string base = NodeName(node);
  const onnx::TensorProto* b_constant = Constant(node.input(1));
  const int nb = static_cast<int>(batch_);  // engine batch: N in batch mode, else 1
  std::vector<int> final_engine = EngineShape(y);
  // A vector times a vector is a scalar: in batch mode it has no batch dimension
  // (found by fuzz/onnx_fuzzer.cpp).
  if (final_engine.empty()) Fail(node, "the output is a scalar, without the batch dimension");
  final_engine[0] = -1;

  // dense(x, B^T) into `output`: nn.Linear with the weight B^T when B is a
  // constant (transposed here, once), else a transpose operator and F.linear.
  const auto dense = [&](int x, int output) {
    if (b_constant) {
      const std::vector<float> bv = OnnxTensorFloats(*b_constant);
      std::vector<float> weight(bv.size());  // (n, k) = B^T
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < k; ++j) weight[i * k + j] = bv[j * n + i];
      }
      pnnx::Operator& op = Emit("nn.Linear", base + "_dense", {x}, output);
      op.params["bias"] = BoolParam(false);
      op.params["in_features"] = IntParam(static_cast<int>(k));
      op.params["out_features"] = IntParam(static_cast<int>(n));
      op.attrs["weight"] = FloatAttribute({static_cast<int>(n), static_cast<int>(k)}, weight);
      return;
    }
    // Only in single-item mode (BatchModeFits): B is the item (K, N), or the
    // vector (K), whose column (K, 1) transposed is the row (1, K).
    const int b_operand = Input(node, 1);
    const int b_transposed =
        NewOperand(base + "_b_transpose", {1, static_cast<int>(n), static_cast<int>(k)});
    if (b_vector) {
      Emit("Tensor.reshape", base + "_b_transpose", {b_operand}, b_transposed).params["shape"] =
          IntsParam({-1, 1, static_cast<int>(k)});
    } else {
      Emit("torch.permute", base + "_b_transpose", {b_operand}, b_transposed).params["dims"] =
          IntsParam({0, 2, 1});
    }
    Emit("F.linear", base + "_dense", {x, b_transposed}, output);
  };

  if (a_rank == 2 && b_rank == 2) {
    // Case 1: dense on A and B^T, which is the whole MatMul. Dense keeps the
    // rank of its input, so a vector A gives the vector result by itself; only
    // a column B leaves (M, 1) to reshape to (M).
    const int x = Input(node, 0);
    if (!b_vector || a_vector) {
      dense(x, Output(node));
      return;
    }
    const int column = NewOperand(base + "_dense", EngineShape({m, 1}));
    dense(x, column);
    Emit("Tensor.reshape", base + "_reshape", {column}, Output(node)).params["shape"] =
        IntsParam(final_engine);
    return;
  }
  if (b_rank == 2) {
    // Case 2: A to [-1, K] (the engine keeps its batch first: [batch, rows, K]),
    // dense, and the result back to final_shape.
    const int rows = static_cast<int>(Product(a.begin() + (batch_mode_ ? 1 : 0), a.end() - 1));
    const int x = Input(node, 0);
    const int a_reshaped = NewOperand(base + "_a_reshape", {nb, rows, static_cast<int>(k)});
    Emit("Tensor.reshape", base + "_a_reshape", {x}, a_reshaped).params["shape"] =
        IntsParam({-1, rows, static_cast<int>(k)});
    const int dense_out = NewOperand(base + "_dense", {nb, rows, static_cast<int>(n)});
    dense(a_reshaped, dense_out);
    Emit("Tensor.reshape", base + "_reshape", {dense_out}, Output(node)).params["shape"] =
        IntsParam(final_engine);
    return;
  }

  // Case 3: A to [-1, M, K] and B to [-1, K, N], batch matmul, result back to
  // final_shape. In batch mode dimension 0 stays the engine batch, so each
  // item holds the matrices of its own batch entry.
  if (batch_mode_ && (a_rank == 2 || (!b_constant && b_rank != a_rank))) {
    FailBatch(node,
              "a 2-D A, or a computed B of another rank, would pair matrices across the "
              "batch");
  }
  Shape item_batch_a(a.begin() + (batch_mode_ ? 1 : 0), a.end() - 2);
  Shape item_batch_b = batch_b;
  if (batch_mode_ && (!b_constant || b_rank == a_rank)) {
    if (b_constant && b[0] != 1) {
      FailBatch(node, fmt::format("constant B {} differs along the batch dimension", ShapeText(b)));
    }
    item_batch_b.erase(item_batch_b.begin());
  }
  const int64_t ca = Product(item_batch_a.begin(), item_batch_a.end());
  const int64_t cb = Product(item_batch_b.begin(), item_batch_b.end());
  // Flattened, the two batches pair one to one or one side is a single matrix.
  if (ca != 1 && cb != 1 && WithoutLeadingOnes(item_batch_a) != WithoutLeadingOnes(item_batch_b)) {
    Fail(node, fmt::format("batch dimensions {} and {} broadcast in a way a flattened batch "
                           "matmul cannot express",
                           ShapeText(batch_a), ShapeText(batch_b)));
  }
  const int mi = static_cast<int>(m), ki = static_cast<int>(k), ni = static_cast<int>(n);
  const int x = Input(node, 0);
  const int a_reshaped = NewOperand(base + "_a_reshape", {nb, static_cast<int>(ca), mi, ki});
  Emit("Tensor.reshape", base + "_a_reshape", {x}, a_reshaped).params["shape"] =
      IntsParam({-1, static_cast<int>(ca), mi, ki});
  int b_reshaped = 0;
  if (b_constant) {
    // A constant is reshaped here, once: the same (cb, K, N) for every item.
    b_reshaped = NewOperand(base + "_b_reshape", {nb, static_cast<int>(cb), ki, ni});
    Emit("pnnx.Attribute", base + "_b_reshape", {}, b_reshaped).attrs["data"] =
        FloatAttribute({static_cast<int>(cb), ki, ni}, OnnxTensorFloats(*b_constant));
  } else {
    const int b_operand = Input(node, 1);
    b_reshaped = NewOperand(base + "_b_reshape", {nb, static_cast<int>(cb), ki, ni});
    Emit("Tensor.reshape", base + "_b_reshape", {b_operand}, b_reshaped).params["shape"] =
        IntsParam({-1, static_cast<int>(cb), ki, ni});
  }
  const int product =
      NewOperand(base + "_batch_matmul", {nb, static_cast<int>(std::max(ca, cb)), mi, ni});
  Emit("torch.matmul", base + "_batch_matmul", {a_reshaped, b_reshaped}, product);
  Emit("Tensor.reshape", base + "_reshape", {product}, Output(node)).params["shape"] =
      IntsParam(final_engine);
}

void Converter::ConvertUpsample(const onnx::NodeProto& node) {
  // Upsample-7 keeps its scales in an attribute; from opset 9 they are input 1.
  const onnx::AttributeProto* scales_attr = FindAttribute(node, "scales");
  const int expected = scales_attr ? 1 : 2;
  if (node.input_size() != expected) {
    Fail(node,
         fmt::format("Upsample needs {} input(s) ({}), has {}", expected,
                     scales_attr ? "X; scales as an attribute" : "X, scales", node.input_size()));
  }
  const std::string mode = AttributeString(node, "mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear") {
    Fail(node, fmt::format("mode={} is not supported (nearest, linear)", mode));
  }
  const size_t rank = ShapeOf(node, node.input(0)).size();
  if (rank == 5) Fail(node, "a 5-D input (volumetric upsampling) is not supported");
  std::vector<float> scales;
  if (scales_attr) {
    scales.assign(scales_attr->floats().begin(), scales_attr->floats().end());
  } else {
    scales = OnnxTensorFloats(RequireConstant(node, 1));
  }
  if (scales.size() != rank) {
    Fail(node, fmt::format("has {} scales for a {}-D input", scales.size(), rank));
  }
  // ONNX's Upsample maps x_in = x_out / scale: the asymmetric mapping, floored.
  EmitResize(node, mode == "nearest" ? "nearest" : "bilinear", "asymmetric", "floor",
             scales.size() > 2 ? scales[2] : 1.f, scales.size() > 3 ? scales[3] : 1.f, false, 0, 0);
}

void Converter::ConvertResize(const onnx::NodeProto& node) {
  const std::string onnx_mode = AttributeString(node, "mode", "nearest");
  if (onnx_mode != "nearest" && onnx_mode != "linear" && onnx_mode != "cubic") {
    Fail(node, fmt::format("mode={} is not supported (nearest, linear, cubic)", onnx_mode));
  }
  const std::string mode = onnx_mode == "nearest"  ? "nearest"
                           : onnx_mode == "linear" ? "bilinear"
                                                   : "bicubic";
  const size_t rank = ShapeOf(node, node.input(0)).size();
  if (rank == 5) Fail(node, "a 5-D input (volumetric resize) is not supported");
  if (opset_ < 11) {  // Resize-10: (X, scales) with Upsample's mapping
    if (node.input_size() != 2)
      Fail(node, fmt::format("needs 2 inputs, has {}", node.input_size()));
    const std::vector<float> scales = OnnxTensorFloats(RequireConstant(node, 1));
    if (scales.size() != 4) Fail(node, fmt::format("needs 4 scales, has {}", scales.size()));
    EmitResize(node, mode, "asymmetric", "floor", scales[2], scales[3], false, 0, 0);
    return;
  }
  if (FindAttribute(node, "axes") || FindAttribute(node, "antialias")) {
    Fail(node, "the axes and antialias attributes are not supported");
  }
  const std::string coordinates =
      AttributeString(node, "coordinate_transformation_mode", "half_pixel");
  const std::string nearest = AttributeString(node, "nearest_mode", "round_prefer_floor");
  // Inputs: X, roi, scales, sizes; an empty name marks an absent one, and an
  // empty scales tensor means "use sizes".
  std::vector<float> scales;
  if (HasInput(node, 2)) scales = OnnxTensorFloats(RequireConstant(node, 2));
  if (!scales.empty()) {
    if (scales.size() != 4) Fail(node, fmt::format("needs 4 scales, has {}", scales.size()));
    EmitResize(node, mode, coordinates, nearest, scales[2], scales[3], false, 0, 0);
    return;
  }
  if (!HasInput(node, 3)) Fail(node, "has neither scales nor sizes");
  const std::vector<int64_t> sizes = OnnxTensorInts(RequireConstant(node, 3));
  const Shape& x = ShapeOf(node, node.input(0));
  if (sizes.size() != 4 || x.size() != 4) Fail(node, "needs 4 sizes for a 4-D input");
  if (sizes[0] != x[0] || sizes[1] != x[1]) Fail(node, "resizes N or C, not only H and W");
  // With sizes, the coordinate mapping uses scale = out / in.
  EmitResize(node, mode, coordinates, nearest,
             static_cast<float>(sizes[2]) / static_cast<float>(x[2]),
             static_cast<float>(sizes[3]) / static_cast<float>(x[3]), true, sizes[2], sizes[3]);
}

void Converter::EmitResize(const onnx::NodeProto& node, const std::string& mode,
                           const std::string& coordinate_mode, const std::string& nearest_mode,
                           float scale_h, float scale_w, bool sizes_given, int64_t size_h,
                           int64_t size_w) {
  static const std::set<std::string> coordinate_modes = {
      "half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"};
  static const std::set<std::string> nearest_modes = {"floor", "ceil", "round_prefer_floor",
                                                      "round_prefer_ceil"};
  if (!coordinate_modes.count(coordinate_mode)) {
    Fail(node, fmt::format("coordinate_transformation_mode={} is not supported ({})",
                           coordinate_mode, fmt::join(coordinate_modes, ", ")));
  }
  if (mode == "nearest" && !nearest_modes.count(nearest_mode)) {
    Fail(node, fmt::format("nearest_mode={} is not supported", nearest_mode));
  }
  const Shape& x = ShapeOf(node, node.input(0));
  if (x.size() != 4) Fail(node, fmt::format("input {} is not 4-D (N,C,H,W)", ShapeText(x)));
  if (!(scale_h > 0) || !(scale_w > 0)) Fail(node, "scales must be positive");
  if (!sizes_given) {
    const double h = std::floor(static_cast<double>(x[2]) * scale_h);
    const double w = std::floor(static_cast<double>(x[3]) * scale_w);
    // Engine dims are int; a huge scale (or inf times a zero dim, NaN) gives no size at all.
    constexpr double kLargest = std::numeric_limits<int>::max();
    if (!(std::fabs(h) <= kLargest && std::fabs(w) <= kLargest)) {
      Fail(node, fmt::format("scales ({}, {}) on input {} give a size beyond {}", scale_h, scale_w,
                             ShapeText(x), std::numeric_limits<int>::max()));
    }
    size_h = static_cast<int64_t>(h);
    size_w = static_cast<int64_t>(w);
  }
  const Shape resized = {x[0], x[1], size_h, size_w};
  const Shape& y = ShapeOf(node, node.output(0));
  if (resized != y) {
    Fail(node, fmt::format("the resized shape {} differs from the node's output shape {} "
                           "(scales on N or C are not supported)",
                           ShapeText(resized), ShapeText(y)));
  }
  // ONNX's align_corners divides by the unrounded resized length in·scale, not
  // by the output size: x_in = x_out·(in-1)/(in·scale-1). With scales given
  // that is the asymmetric mapping for the scale (in·scale-1)/(in-1)
  // (conformance: test_resize_downsample_scales_linear_align_corners).
  std::string coordinates = coordinate_mode;
  if (coordinate_mode == "align_corners" && !sizes_given) {
    const auto corner_scale = [](int64_t in, float scale) {
      const double resized = static_cast<double>(in) * scale;
      // One input pixel or one output pixel: every index maps to 0 anyway.
      return in > 1 && resized > 1 ? static_cast<float>((resized - 1) / (in - 1)) : 1.f;
    };
    coordinates = "asymmetric";
    scale_h = corner_scale(x[2], scale_h);
    scale_w = corner_scale(x[3], scale_w);
  }
  pnnx::Operator& op = EmitUnary(node, "kuiper.Resize");
  op.params["mode"] = StringParam(mode);
  op.params["coordinate_mode"] = StringParam(coordinates);
  op.params["nearest_mode"] = StringParam(nearest_mode);
  op.params["size"] = IntsParam({static_cast<int>(size_h), static_cast<int>(size_w)});
  op.params["scale"] = FloatsParam({scale_h, scale_w});
  if (mode == "bicubic") {
    const float a = FloatAttributeChecked(node, "cubic_coeff_a", -0.75f);
    if (!std::isfinite(a)) Fail(node, "cubic_coeff_a must be finite");
    op.params["cubic_coeff_a"] = FloatParam(a);
    op.params["exclude_outside"] = BoolParam(AttributeInt(node, "exclude_outside", 0) != 0);
  }
}

}  // namespace kuiper::onnx_import

namespace kuiper::onnx_import {

// Slice (opset 10+: inputs data, starts, ends, axes, steps; before: attributes
// starts, ends, axes) with constant bounds: one operator per axis (dim counted
// with the batch as 0; start and end clamped to the axis as ONNX does, end
// exclusive). A positive step is a Tensor.slice. A negative step walks the
// axis backwards, start, start+step, ... while > end, which PyTorch's slice
// cannot do: it becomes torch.index_select with those indices, written out.
void Converter::ConvertSlice(const onnx::NodeProto& node) {
  const Shape& in = ShapeOf(node, node.input(0));
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (opset_ < 10) {
    starts = AttributeInts(node, "starts", {});
    ends = AttributeInts(node, "ends", {});
    axes = AttributeInts(node, "axes", {});
  } else {
    starts = OnnxTensorInts(RequireConstant(node, 1));
    ends = OnnxTensorInts(RequireConstant(node, 2));
    if (HasInput(node, 3)) axes = OnnxTensorInts(RequireConstant(node, 3));
    if (HasInput(node, 4)) steps = OnnxTensorInts(RequireConstant(node, 4));
  }
  if (axes.empty()) {
    for (size_t a = 0; a < starts.size(); ++a) axes.push_back(static_cast<int64_t>(a));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    Fail(node, fmt::format("starts, ends, axes and steps hold {}, {}, {} and {} values",
                           starts.size(), ends.size(), axes.size(), steps.size()));
  }
  int current = Input(node, 0);
  Shape shape = in;
  for (size_t k = 0; k < axes.size(); ++k) {
    if (steps[k] == 0) Fail(node, fmt::format("step 0 on axis {}", axes[k]));
    const int dim = EngineAxis(node, axes[k], in.size());
    const int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    const int64_t size = shape[axis];
    int64_t start = starts[k] < 0 ? starts[k] + size : starts[k];
    int64_t end = ends[k] < 0 ? ends[k] + size : ends[k];
    // ONNX's clamping: [0, size] for a positive step; for a negative one,
    // start to [0, size-1] and end to [-1, size-1] (-1: through element 0).
    // An INT64_MIN end ("to the front") stays below -1 after adding size.
    if (steps[k] > 0) {
      start = std::clamp<int64_t>(start, 0, size);
      end = std::clamp<int64_t>(end, 0, size);
      // (end - start - 1) / step + 1 elements: no overflow for any positive step.
      shape[axis] = end > start ? (end - start - 1) / steps[k] + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, size - 1);
      end = std::clamp<int64_t>(end, -1, size - 1);
      // -step may overflow for INT64_MIN: count with the step as unsigned.
      const uint64_t back = 0 - static_cast<uint64_t>(steps[k]);
      const uint64_t span = start > end ? static_cast<uint64_t>(start - end - 1) : 0;
      shape[axis] = start > end ? static_cast<int64_t>(span / back) + 1 : 0;
    }
    if (shape[axis] == 0) {
      Fail(node, fmt::format("the slice of axis {} is empty (start {}, end {}, step {} on size "
                             "{}); engine tensors are never empty",
                             axes[k], starts[k], ends[k], steps[k], size));
    }
    const bool last = k + 1 == axes.size();
    const std::string part = fmt::format("{}_{}", node.output(0), k);
    const int output = last ? Output(node) : NewOperand(part, EngineShape(shape));
    const std::string name = last ? NodeName(node) : part;
    if (steps[k] > 0) {
      pnnx::Operator& op = Emit("Tensor.slice", name, {current}, output);
      op.params["dim"] = IntParam(dim);
      op.params["start"] = IntParam(static_cast<int>(start));
      op.params["end"] = IntParam(static_cast<int>(end));
      // A step beyond the axis takes the first element alone.
      op.params["step"] = IntParam(static_cast<int>(std::min(steps[k], size)));
    } else {
      std::vector<int> index;
      for (int64_t j = 0; j < shape[axis]; ++j) {
        index.push_back(static_cast<int>(start + j * std::max(steps[k], -size)));
      }
      pnnx::Operator& op = Emit("torch.index_select", name, {current}, output);
      op.params["dim"] = IntParam(dim);
      op.params["index"] = IntsParam(index);
    }
    current = output;
  }
  if (ShapeOf(node, node.output(0)) != shape) {
    Fail(node, fmt::format("the slice gives {}, the node declares {}", ShapeText(shape),
                           ShapeText(ShapeOf(node, node.output(0)))));
  }
}

}  // namespace kuiper::onnx_import
