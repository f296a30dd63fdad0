// MatMul lowered onto dense / reshape / batch matmul (the seed method;
// docs/onnx.md walks through an example of each case), and Gemm onto
// nn.Linear.
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

int64_t DimsProduct(Shape::const_iterator begin, Shape::const_iterator end) {
  return std::accumulate(begin, end, int64_t{1}, std::multiplies<>());
}

Shape WithoutLeadingOnes(Shape shape) {
  while (!shape.empty() && shape.front() == 1) shape.erase(shape.begin());
  return shape;
}

void LowerMatMul(Context& ctx, const onnx::NodeProto& node) {
  if (node.input_size() != 2) {
    ctx.Fail(node, fmt::format("MatMul needs exactly 2 inputs (A, B), has {}", node.input_size()));
  }
  const Shape& a_in = ctx.ShapeOf(node, node.input(0));
  const Shape& b_in = ctx.ShapeOf(node, node.input(1));
  const Shape& y = ctx.ShapeOf(node, node.output(0));
  if (a_in.empty() || b_in.empty()) {
    ctx.Fail(node, fmt::format("inputs of shapes {} and {}: a scalar is not a matrix",
                               ShapeText(a_in), ShapeText(b_in)));
  }
  // NumPy's rule for vectors: a 1-D A is the row (1, K), a 1-D B the column
  // (K, 1), and that 1 leaves the result again. Row-major, the values are the same.
  const bool a_vector = a_in.size() == 1, b_vector = b_in.size() == 1;
  const Shape a = a_vector ? Shape{1, a_in[0]} : a_in;
  const Shape b = b_vector ? Shape{b_in[0], 1} : b_in;
  const size_t a_rank = a.size(), b_rank = b.size();
  const int64_t m = a[a_rank - 2], k = a[a_rank - 1], n = b[b_rank - 1];
  if (b[b_rank - 2] != k) {
    ctx.Fail(node,
             fmt::format("A {} and B {} do not chain (K differs)", ShapeText(a), ShapeText(b)));
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
    ctx.Fail(node,
             fmt::format("the lowered result has shape {}, but the MatMul's output has shape {}",
                         ShapeText(final_shape), ShapeText(y)));
  }
  const std::string base = ctx.NodeName(node);
  const onnx::TensorProto* b_constant = ctx.Constant(node.input(1));
  const int nb = static_cast<int>(ctx.batch());  // engine batch: N in batch mode, else 1
  std::vector<int> final_engine = ctx.EngineShape(y);
  // A vector times a vector is a scalar: in batch mode it has no batch dimension
  // (found by fuzz/onnx_fuzzer.cpp).
  if (final_engine.empty()) ctx.Fail(node, "the output is a scalar, without the batch dimension");
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
      pnnx::Operator& op = ctx.Emit("nn.Linear", base + "_dense", {x}, output);
      op.params["bias"] = BoolParam(false);
      op.params["in_features"] = IntParam(static_cast<int>(k));
      op.params["out_features"] = IntParam(static_cast<int>(n));
      op.attrs["weight"] = FloatAttribute({static_cast<int>(n), static_cast<int>(k)}, weight);
      return;
    }
    // Only in single-item mode (BatchModeFits): B is the item (K, N), or the
    // vector (K), whose column (K, 1) transposed is the row (1, K).
    const int b_operand = ctx.Input(node, 1);
    const int b_transposed =
        ctx.NewOperand(base + "_b_transpose", {1, static_cast<int>(n), static_cast<int>(k)});
    if (b_vector) {
      ctx.Emit("Tensor.reshape", base + "_b_transpose", {b_operand}, b_transposed).params["shape"] =
          IntsParam({-1, 1, static_cast<int>(k)});
    } else {
      ctx.Emit("torch.permute", base + "_b_transpose", {b_operand}, b_transposed).params["dims"] =
          IntsParam({0, 2, 1});
    }
    ctx.Emit("F.linear", base + "_dense", {x, b_transposed}, output);
  };

  if (a_rank == 2 && b_rank == 2) {
    // Case 1: dense on A and B^T, which is the whole MatMul. Dense keeps the
    // rank of its input, so a vector A gives the vector result by itself; only
    // a column B leaves (M, 1) to reshape to (M).
    const int x = ctx.Input(node, 0);
    if (!b_vector || a_vector) {
      dense(x, ctx.Output(node));
      return;
    }
    const int column = ctx.NewOperand(base + "_dense", ctx.EngineShape({m, 1}));
    dense(x, column);
    ctx.Emit("Tensor.reshape", base + "_reshape", {column}, ctx.Output(node)).params["shape"] =
        IntsParam(final_engine);
    return;
  }
  if (b_rank == 2) {
    // Case 2: A to [-1, K] (the engine keeps its batch first: [batch, rows, K]),
    // dense, and the result back to final_shape.
    const int rows =
        static_cast<int>(DimsProduct(a.begin() + (ctx.batch_mode() ? 1 : 0), a.end() - 1));
    const int x = ctx.Input(node, 0);
    const int a_reshaped = ctx.NewOperand(base + "_a_reshape", {nb, rows, static_cast<int>(k)});
    ctx.Emit("Tensor.reshape", base + "_a_reshape", {x}, a_reshaped).params["shape"] =
        IntsParam({-1, rows, static_cast<int>(k)});
    const int dense_out = ctx.NewOperand(base + "_dense", {nb, rows, static_cast<int>(n)});
    dense(a_reshaped, dense_out);
    ctx.Emit("Tensor.reshape", base + "_reshape", {dense_out}, ctx.Output(node)).params["shape"] =
        IntsParam(final_engine);
    return;
  }

  // Case 3: A to [-1, M, K] and B to [-1, K, N], batch matmul, result back to
  // final_shape. In batch mode dimension 0 stays the engine batch, so each
  // item holds the matrices of its own batch entry.
  if (ctx.batch_mode() && (a_rank == 2 || (!b_constant && b_rank != a_rank))) {
    ctx.FailBatch(node,
                  "a 2-D A, or a computed B of another rank, would pair matrices across the "
                  "batch");
  }
  Shape item_batch_a(a.begin() + (ctx.batch_mode() ? 1 : 0), a.end() - 2);
  Shape item_batch_b = batch_b;
  if (ctx.batch_mode() && (!b_constant || b_rank == a_rank)) {
    if (b_constant && b[0] != 1) {
      ctx.FailBatch(node,
                    fmt::format("constant B {} differs along the batch dimension", ShapeText(b)));
    }
    item_batch_b.erase(item_batch_b.begin());
  }
  const int64_t ca = DimsProduct(item_batch_a.begin(), item_batch_a.end());
  const int64_t cb = DimsProduct(item_batch_b.begin(), item_batch_b.end());
  // Flattened, the two batches pair one to one or one side is a single matrix.
  if (ca != 1 && cb != 1 && WithoutLeadingOnes(item_batch_a) != WithoutLeadingOnes(item_batch_b)) {
    ctx.Fail(node, fmt::format("batch dimensions {} and {} broadcast in a way a flattened batch "
                               "matmul cannot express",
                               ShapeText(batch_a), ShapeText(batch_b)));
  }
  const int mi = static_cast<int>(m), ki = static_cast<int>(k), ni = static_cast<int>(n);
  const int x = ctx.Input(node, 0);
  const int a_reshaped = ctx.NewOperand(base + "_a_reshape", {nb, static_cast<int>(ca), mi, ki});
  ctx.Emit("Tensor.reshape", base + "_a_reshape", {x}, a_reshaped).params["shape"] =
      IntsParam({-1, static_cast<int>(ca), mi, ki});
  int b_reshaped = 0;
  if (b_constant) {
    // A constant is reshaped here, once: the same (cb, K, N) for every item.
    b_reshaped = ctx.NewOperand(base + "_b_reshape", {nb, static_cast<int>(cb), ki, ni});
    ctx.Emit("pnnx.Attribute", base + "_b_reshape", {}, b_reshaped).attrs["data"] =
        FloatAttribute({static_cast<int>(cb), ki, ni}, OnnxTensorFloats(*b_constant));
  } else {
    const int b_operand = ctx.Input(node, 1);
    b_reshaped = ctx.NewOperand(base + "_b_reshape", {nb, static_cast<int>(cb), ki, ni});
    ctx.Emit("Tensor.reshape", base + "_b_reshape", {b_operand}, b_reshaped).params["shape"] =
        IntsParam({-1, static_cast<int>(cb), ki, ni});
  }
  const int product =
      ctx.NewOperand(base + "_batch_matmul", {nb, static_cast<int>(std::max(ca, cb)), mi, ni});
  ctx.Emit("torch.matmul", base + "_batch_matmul", {a_reshaped, b_reshaped}, product);
  ctx.Emit("Tensor.reshape", base + "_reshape", {product}, ctx.Output(node)).params["shape"] =
      IntsParam(final_engine);
}

// Gemm: Y = alpha * A' * B' + beta * C, A' = A or A^T (transA), B' = B or
// B^T (transB). B must be a constant (weights; a graph input is bound at
// load time): nn.Linear with alpha folded into W. transA transposes A first
// (torch.permute), which moves the batch dimension: the graph then runs as
// one item. C of 1 or N values is nn.Linear's bias; any other shape that
// broadcasts to (M, N), such as a full (M, N) matrix, is added after it.
void LowerGemm(Context& ctx, const onnx::NodeProto& node) {
  const bool trans_a = AttributeInt(node, "transA", 0) != 0;
  const Shape& as = ctx.ShapeOf(node, node.input(0));
  if (as.size() != 2) ctx.Fail(node, fmt::format("A must be 2-D, has shape {}", ShapeText(as)));
  const onnx::TensorProto& b = ctx.RequireConstant(node, 1);
  const Shape bs(b.dims().begin(), b.dims().end());
  if (bs.size() != 2) ctx.Fail(node, "B must be 2-D");
  const bool trans_b = AttributeInt(node, "transB", 0) != 0;
  const float alpha = AttributeFloat(node, "alpha", 1.f);
  const float beta = AttributeFloat(node, "beta", 1.f);
  const int64_t k = trans_b ? bs[1] : bs[0];
  const int64_t n = trans_b ? bs[0] : bs[1];
  const int64_t m = trans_a ? as[1] : as[0];
  if ((trans_a ? as[0] : as[1]) != k) {
    ctx.Fail(node, fmt::format("A {} (transA={}) and B {} (transB={}) do not chain", ShapeText(as),
                               trans_a ? 1 : 0, ShapeText(bs), trans_b ? 1 : 0));
  }
  if (trans_a && ctx.batch_mode())
    ctx.FailBatch(node, "transA=1 moves dimension 0, the engine's batch");
  // nn.Linear keeps W as (out, in) = (N, K): B itself when transB, else B^T.
  const std::vector<float> bv = ConstantAsFloats(b);
  std::vector<float> weight(bv.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      weight[i * k + j] = alpha * (trans_b ? bv[i * k + j] : bv[j * n + i]);
    }
  }
  std::vector<float> bias;
  bool matrix_c = false;
  if (ctx.HasInput(node, 2)) {
    const onnx::TensorProto& c = ctx.RequireConstant(node, 2);
    const Shape cs(c.dims().begin(), c.dims().end());
    const int64_t count = std::accumulate(cs.begin(), cs.end(), int64_t{1}, std::multiplies<>());
    const bool row = count == 1 || (count == n && (cs.size() < 2 || cs[cs.size() - 2] == 1));
    if (row) {
      const std::vector<float> cv = ConstantAsFloats(c);
      for (int64_t i = 0; i < n; ++i) bias.push_back(beta * cv[cv.size() == 1 ? 0 : i]);
    } else {
      const bool broadcasts = cs.size() <= 2 && (cs.back() == 1 || cs.back() == n) &&
                              (cs.size() < 2 || cs[0] == 1 || cs[0] == m);
      if (!broadcasts) {
        ctx.Fail(node, fmt::format("C of shape {} does not broadcast to (M, N) = ({},{})",
                                   ShapeText(cs), m, n));
      }
      matrix_c = true;
    }
  }
  int a = ctx.Input(node, 0);
  if (trans_a) {
    const int transposed = ctx.NewOperand(node.output(0) + "_a_t", ctx.EngineShape({m, k}));
    ctx.Emit("torch.permute", ctx.NodeName(node) + "_transA", {a}, transposed).params["dims"] =
        IntsParam({0, 2, 1});
    a = transposed;
  }
  const int product =
      matrix_c ? ctx.NewOperand(node.output(0) + "_ab", ctx.EngineShape({m, n})) : ctx.Output(node);
  pnnx::Operator& op = ctx.Emit("nn.Linear", ctx.NodeName(node), {a}, product);
  op.params["bias"] = BoolParam(!bias.empty());
  op.params["in_features"] = IntParam(static_cast<int>(k));
  op.params["out_features"] = IntParam(static_cast<int>(n));
  op.attrs["weight"] = FloatAttribute({static_cast<int>(n), static_cast<int>(k)}, weight);
  if (!bias.empty()) op.attrs["bias"] = FloatAttribute({static_cast<int>(n)}, bias);
  if (matrix_c) {
    const int c = ctx.Input(node, 2);
    ctx.Emit("pnnx.Expression", ctx.NodeName(node) + "_c", {product, c}, ctx.Output(node))
        .params["expr"] = StringParam(fmt::format("add(@0,mul(@1,{:.8e}))", beta));
  }
}

}  // namespace

KUIPER_ONNX_LOWERING(LowerMatMul,
                     "NumPy broadcasting of the batch dims that a flattened batch matmul expresses",
                     "MatMul");
KUIPER_ONNX_LOWERING(LowerGemm, "2-D A; B and C constant; C broadcasts to (M, N)", "Gemm");

}  // namespace kuiper::onnx_import
