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

// A MatMul's shapes as NumPy reads them, checked against the node's output.
// NumPy's rule for vectors: a 1-D A is the row (1, K), a 1-D B the column
// (K, 1), and that 1 leaves the result again. Row-major, the values are the same.
struct MatMulShapes {
  Shape a, b;  // with vectors promoted to a row / a column
  bool a_vector = false, b_vector = false;
  int64_t m = 0, k = 0, n = 0;
  Shape batch_a, batch_b;         // the dims before the last two
  std::vector<int> final_engine;  // the result's engine shape, batch -1
  const onnx::TensorProto* b_constant = nullptr;
  std::string base;  // the node's name, the prefix of every operator emitted
};

// final_shape = out_batch + a_shape[a_rank-2 : a_rank-1] + b_shape[b_rank-1 :],
// out_batch being the batch dims of the higher-ranked input, or their
// element-wise maximum for equal ranks.
MatMulShapes MatMulShapesOf(Context& ctx, const onnx::NodeProto& node) {
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
  MatMulShapes s;
  s.a_vector = a_in.size() == 1;
  s.b_vector = b_in.size() == 1;
  s.a = s.a_vector ? Shape{1, a_in[0]} : a_in;
  s.b = s.b_vector ? Shape{b_in[0], 1} : b_in;
  const size_t a_rank = s.a.size(), b_rank = s.b.size();
  s.m = s.a[a_rank - 2];
  s.k = s.a[a_rank - 1];
  s.n = s.b[b_rank - 1];
  if (s.b[b_rank - 2] != s.k) {
    ctx.Fail(node,
             fmt::format("A {} and B {} do not chain (K differs)", ShapeText(s.a), ShapeText(s.b)));
  }
  s.batch_a.assign(s.a.begin(), s.a.end() - 2);
  s.batch_b.assign(s.b.begin(), s.b.end() - 2);
  Shape out_batch = a_rank > b_rank ? s.batch_a : s.batch_b;
  if (a_rank == b_rank) {
    for (size_t i = 0; i < s.batch_a.size(); ++i) {
      out_batch[i] = std::max(s.batch_a[i], s.batch_b[i]);
    }
  }
  Shape final_shape = out_batch;
  if (!s.a_vector) final_shape.push_back(s.m);
  if (!s.b_vector) final_shape.push_back(s.n);
  if (final_shape != y) {
    ctx.Fail(node, fmt::format("the lowered result has shape {}, but the MatMul's output has "
                               "shape {}",
                               ShapeText(final_shape), ShapeText(y)));
  }
  s.base = ctx.NodeName(node);
  s.b_constant = ctx.Constant(node.input(1));
  s.final_engine = ctx.EngineShape(y);
  // A vector times a vector is a scalar: in batch mode it has no batch dimension
  // (found by fuzz/onnx_fuzzer.cpp).
  if (s.final_engine.empty()) ctx.Fail(node, "the output is a scalar, without the batch dimension");
  s.final_engine[0] = -1;
  return s;
}

// dense(x, B^T) into `output`: nn.Linear with the weight B^T when B is a
// constant (transposed here, once), else a transpose operator and F.linear.
void EmitDense(Context& ctx, const onnx::NodeProto& node, const MatMulShapes& s, int x,
               int output) {
  const int64_t k = s.k, n = s.n;
  if (s.b_constant) {
    const std::vector<float> bv = OnnxTensorFloats(*s.b_constant);
    std::vector<float> weight(bv.size());  // (n, k) = B^T
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < k; ++j) weight[i * k + j] = bv[j * n + i];
    }
    pnnx::Operator& op = ctx.Emit("nn.Linear", s.base + "_dense", {x}, output);
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
      ctx.NewOperand(s.base + "_b_transpose", {1, static_cast<int>(n), static_cast<int>(k)});
  if (s.b_vector) {
    ctx.Emit("Tensor.reshape", s.base + "_b_transpose", {b_operand}, b_transposed).params["shape"] =
        IntsParam({-1, 1, static_cast<int>(k)});
  } else {
    ctx.Emit("torch.permute", s.base + "_b_transpose", {b_operand}, b_transposed).params["dims"] =
        IntsParam({0, 2, 1});
  }
  ctx.Emit("F.linear", s.base + "_dense", {x, b_transposed}, output);
}

// Case 1, both 2-D: dense on A and B^T, which is the whole MatMul.
//   A (3,4) x constant B (4,5) -> (3,5):  nn.Linear weight=(5,4)=B^T
// Dense keeps the rank of its input, so a vector A gives the vector result by
// itself (A (4) x B (4,5) -> (5)); only a column B leaves (M, 1) to reshape to
// (M) (A (3,4) x B (4) -> (3)).
void LowerMatMul2D(Context& ctx, const onnx::NodeProto& node, const MatMulShapes& s) {
  const int x = ctx.Input(node, 0);
  if (!s.b_vector || s.a_vector) {
    EmitDense(ctx, node, s, x, ctx.Output(node));
    return;
  }
  const int column = ctx.NewOperand(s.base + "_dense", ctx.EngineShape({s.m, 1}));
  EmitDense(ctx, node, s, x, column);
  ctx.Emit("Tensor.reshape", s.base + "_reshape", {column}, ctx.Output(node)).params["shape"] =
      IntsParam(s.final_engine);
}

// Case 2, A higher than 2-D and B 2-D: A to [-1, K] (the engine keeps its
// batch first: [batch, rows, K]), dense, and the result back to final_shape.
//   A (2,3,4,5) x B (5,6) -> (2,3,4,6):  Tensor.reshape (-1,12,5),
//   nn.Linear weight=(6,5) -> (2,12,6), Tensor.reshape (-1,3,4,6)
void LowerMatMulRows(Context& ctx, const onnx::NodeProto& node, const MatMulShapes& s) {
  const int nb = static_cast<int>(ctx.batch());  // engine batch: N in batch mode, else 1
  const int rows =
      static_cast<int>(DimsProduct(s.a.begin() + (ctx.batch_mode() ? 1 : 0), s.a.end() - 1));
  const int k = static_cast<int>(s.k), n = static_cast<int>(s.n);
  const int x = ctx.Input(node, 0);
  const int a_reshaped = ctx.NewOperand(s.base + "_a_reshape", {nb, rows, k});
  ctx.Emit("Tensor.reshape", s.base + "_a_reshape", {x}, a_reshaped).params["shape"] =
      IntsParam({-1, rows, k});
  const int dense_out = ctx.NewOperand(s.base + "_dense", {nb, rows, n});
  EmitDense(ctx, node, s, a_reshaped, dense_out);
  ctx.Emit("Tensor.reshape", s.base + "_reshape", {dense_out}, ctx.Output(node)).params["shape"] =
      IntsParam(s.final_engine);
}

// Case 3, both higher than 2-D: A to [-1, M, K] and B to [-1, K, N], batch
// matmul, result back to final_shape. In batch mode dimension 0 stays the
// engine batch, so each item holds the matrices of its own batch entry.
//   A (2,3,4,5) x B (2,3,5,6) -> (2,3,4,6), batch mode (N = 2):
//   Tensor.reshape (-1,3,4,5) and (-1,3,5,6), torch.matmul -> (2, 3,4,6),
//   Tensor.reshape (-1,3,4,6)
// A constant B is laid out once, as a pnnx.Attribute (cb,K,N) every item shares.
void LowerBatchMatMul(Context& ctx, const onnx::NodeProto& node, const MatMulShapes& s) {
  const bool batch_mode = ctx.batch_mode();
  const size_t a_rank = s.a.size(), b_rank = s.b.size();
  if (batch_mode && (a_rank == 2 || (!s.b_constant && b_rank != a_rank))) {
    ctx.FailBatch(node,
                  "a 2-D A, or a computed B of another rank, would pair matrices across the "
                  "batch");
  }
  Shape item_batch_a(s.a.begin() + (batch_mode ? 1 : 0), s.a.end() - 2);
  Shape item_batch_b = s.batch_b;
  if (batch_mode && (!s.b_constant || b_rank == a_rank)) {
    if (s.b_constant && s.b[0] != 1) {
      ctx.FailBatch(node,
                    fmt::format("constant B {} differs along the batch dimension", ShapeText(s.b)));
    }
    item_batch_b.erase(item_batch_b.begin());
  }
  const int64_t ca = DimsProduct(item_batch_a.begin(), item_batch_a.end());
  const int64_t cb = DimsProduct(item_batch_b.begin(), item_batch_b.end());
  // Flattened, the two batches pair one to one or one side is a single matrix.
  if (ca != 1 && cb != 1 && WithoutLeadingOnes(item_batch_a) != WithoutLeadingOnes(item_batch_b)) {
    ctx.Fail(node, fmt::format("batch dimensions {} and {} broadcast in a way a flattened batch "
                               "matmul cannot express",
                               ShapeText(s.batch_a), ShapeText(s.batch_b)));
  }
  const int nb = static_cast<int>(ctx.batch());
  const int mi = static_cast<int>(s.m), ki = static_cast<int>(s.k), ni = static_cast<int>(s.n);
  const int x = ctx.Input(node, 0);
  const int a_reshaped = ctx.NewOperand(s.base + "_a_reshape", {nb, static_cast<int>(ca), mi, ki});
  ctx.Emit("Tensor.reshape", s.base + "_a_reshape", {x}, a_reshaped).params["shape"] =
      IntsParam({-1, static_cast<int>(ca), mi, ki});
  // A computed B's operand before the reshape's: operands are numbered in order.
  const int b_operand = s.b_constant ? -1 : ctx.Input(node, 1);
  const int b_reshaped = ctx.NewOperand(s.base + "_b_reshape", {nb, static_cast<int>(cb), ki, ni});
  if (s.b_constant) {
    ctx.Emit("pnnx.Attribute", s.base + "_b_reshape", {}, b_reshaped).attrs["data"] =
        FloatAttribute({static_cast<int>(cb), ki, ni}, OnnxTensorFloats(*s.b_constant));
  } else {
    ctx.Emit("Tensor.reshape", s.base + "_b_reshape", {b_operand}, b_reshaped).params["shape"] =
        IntsParam({-1, static_cast<int>(cb), ki, ni});
  }
  const int product =
      ctx.NewOperand(s.base + "_batch_matmul", {nb, static_cast<int>(std::max(ca, cb)), mi, ni});
  ctx.Emit("torch.matmul", s.base + "_batch_matmul", {a_reshaped, b_reshaped}, product);
  ctx.Emit("Tensor.reshape", s.base + "_reshape", {product}, ctx.Output(node)).params["shape"] =
      IntsParam(s.final_engine);
}

// MatMul by the ranks of A and B (vectors promoted): docs/onnx.md §4.
void LowerMatMul(Context& ctx, const onnx::NodeProto& node) {
  const MatMulShapes s = MatMulShapesOf(ctx, node);
  if (s.a.size() == 2 && s.b.size() == 2) {
    LowerMatMul2D(ctx, node, s);
  } else if (s.b.size() == 2) {
    LowerMatMulRows(ctx, node, s);
  } else {
    LowerBatchMatMul(ctx, node, s);
  }
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
KUIPER_ONNX_LOWERING_CONSTANTS(LowerGemm, ConstantInputs({1, 2}),
                               "2-D A; B and C constant; C broadcasts to (M, N)", "Gemm");

}  // namespace kuiper::onnx_import
