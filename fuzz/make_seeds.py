# Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/): copies of
# small committed fixtures, plus hand-made files, each a valid input or a near
# miss that reaches deep into its reader. Deterministic: a rerun writes the
# same bytes. Run with Debian's /usr/bin/python3 (numpy, onnx).
import io
import pathlib
import shutil
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = pathlib.Path(__file__).resolve().parent / "corpus"
ROOT = HERE.parent.parent
FIXTURES = ROOT / "models" / "fixtures"
TEST_DATA = ROOT / "kuiper" / "test" / "data"


def write(target, name, data):
    path = HERE / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def copy(target, source):
    write(target, source.name, source.read_bytes())


# ---- pnnx_param ----
for name in ["tiny_net", "tiny_expression", "tiny_detect", "tiny_groupconv", "tiny_misc",
             "tiny_sigmoid", "resnet18"]:
    copy("pnnx_param", FIXTURES / f"{name}.pnnx.param")
for name in ["pnnx/linear", "pnnx/tiny", "pnnx/unordered", "graph/cycle_only",
             "graph/unknown_layers"]:
    copy("pnnx_param", TEST_DATA / f"{name}.pnnx.param")
# Every parameter and item kind on one line, CRLF line ends, a blank line, a
# scalar attribute, unknown dims and input names.
write("pnnx_param", "every_item_kind.pnnx.param",
      "7767517\r\n3 3\r\n\r\n"
      "pnnx.Input in 0 1 x #x=(1,?,4)f32\r\n"
      "kuiper.Op op 2 1 x x y a=None b=() c=[] d=True e=-7 f=1.000000e-05 g=-inf h=(1,2) "
      "i=[1,2.5] j=(a,b) k=add(@0,@1) l= @w=()f16 @v=(2,0)u8 $left=x $right=x "
      "#y=(1,?,4)i64\r\n"
      "pnnx.Output out 1 0 y\r\n")
write("pnnx_param", "every_type.pnnx.param",
      "7767517\n2 1\n"
      "pnnx.Input in 0 1 0 @a=(1)f32 @b=(1)f64 @c=(1)f16 @d=(1)i64 @e=(1)i32 @f=(1)i16 "
      "@g=(1)i8 @h=(1)u8 @i=(1)bool #0=(1,1)f32\n"
      "pnnx.Output out 1 0 0\n")

# ---- pnnx_bin: archives for the graph of kuiper/test/data/pnnx/linear.pnnx.param ----
for name in ["pnnx_zip64", "python_zip64"]:
    copy("pnnx_bin", TEST_DATA / "pnnx" / f"{name}.pnnx.bin")
WEIGHT = np.arange(1, 7, dtype=np.float32).tobytes()
BIAS = np.array([-1, 0.5], dtype=np.float32).tobytes()


def archive(entries, method=zipfile.ZIP_STORED):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as z:
        for name, data in entries:
            # A fixed date, so a rerun writes the same bytes.
            z.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data,
                       compress_type=method)
    return out.getvalue()


write("pnnx_bin", "stored.pnnx.bin", archive([("linear.bias", BIAS), ("linear.weight", WEIGHT)]))
write("pnnx_bin", "deflated.pnnx.bin",
      archive([("linear.bias", BIAS), ("linear.weight", WEIGHT)], zipfile.ZIP_DEFLATED))
write("pnnx_bin", "extra_entry.pnnx.bin",
      archive([("linear.bias", BIAS), ("linear.weight", WEIGHT), ("unused.data", b"\0" * 8)]))
write("pnnx_bin", "missing_entry.pnnx.bin", archive([("linear.weight", WEIGHT)]))
write("pnnx_bin", "short_entry.pnnx.bin", archive([("linear.bias", BIAS[:4]),
                                                   ("linear.weight", WEIGHT)]))
write("pnnx_bin", "truncated.pnnx.bin",
      archive([("linear.bias", BIAS), ("linear.weight", WEIGHT)])[:-30])

# ---- npy ----
for path in sorted((TEST_DATA / "npy").glob("*.npy")):
    copy("npy", path)
for name in ["tiny_expression.input", "tiny_net.output"]:
    copy("npy", FIXTURES / f"{name}.npy")


def npy(array, version=None):
    out = io.BytesIO()
    np.lib.format.write_array(out, array, version=version)
    return out.getvalue()


values = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
write("npy", "u1.npy", npy(np.arange(6, dtype=np.uint8).reshape(2, 3)))
write("npy", "b1.npy", npy(np.array([[True, False, True]])))
write("npy", "i4.npy", npy(np.arange(6, dtype=np.int32).reshape(1, 2, 3)))
write("npy", "f4_4d.npy", npy(values.reshape(1, 1, 2, 3)))
write("npy", "v2.npy", npy(values, version=(2, 0)))
write("npy", "v3.npy", npy(values, version=(3, 0)))
write("npy", "scalar.npy", npy(np.float32(1.5)))
write("npy", "one_dim.npy", npy(np.arange(3, dtype=np.float32)))
write("npy", "empty.npy", npy(np.zeros((0, 3), dtype=np.float32)))
write("npy", "big_endian.npy", npy(values.astype(">f4")))
write("npy", "fortran.npy", npy(np.asfortranarray(values)))

# ---- expression: operands @0 (3), @1 (2,3), @2 (2,1,3) ----
EXPRESSIONS = {
    "add": "add(@0,@1)",
    "nested": "add(mul(@0,@1),sin(@2))",
    "every_binary": "pow(div(sub(@1,@2),mul(@0,2)),add(@0,1.5))",
    "every_unary": "neg(exp(log(sqrt(rsqrt(abs(sin(@2)))))))",
    "numbers": "add(-1.5e+00,mul(2.000000e+00,.5))",
    "spaces": " add ( @0 , @2 ) ",
    "operand": "@1",
    "bad_operand": "add(@0,@7)",
    "unknown_word": "tan(@0)",
    "deep": "neg(" * 300 + "@0" + ")" * 300,
    # The call rule of any arity (lab course7): three arguments, a wrong count
    # inside a call, a trailing comma.
    "where": "where(gt(@1,0),@2,mul(@0,0.5))",
    "wrong_arity": "add(@0,neg(@1,@2))",
    "trailing_comma": "add(@0,@1,)",
}
for name, text in EXPRESSIONS.items():
    write("expression", name + ".txt", text)

# ---- onnx: one node per supported kind, weights as initializers ----
def model(nodes, inputs, outputs, initializers=(), opset=13, extra_opsets=()):
    graph = helper.make_graph(
        nodes, "fuzz_seed",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(v, dtype=np.float32), n) for n, v in initializers])
    opsets = [helper.make_opsetid("", opset)] + list(extra_opsets)
    m = helper.make_model(graph, opset_imports=opsets, producer_name="kuiper-fuzz-seeds")
    m.ir_version = 7
    return m.SerializeToString()


rng = np.random.default_rng(7)
x4 = [("x", [1, 2, 4, 4])]
write("onnx", "conv_bn_relu.onnx", model(
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
     helper.make_node("BatchNormalization", ["c", "s", "o", "m", "v"], ["n"]),
     helper.make_node("Relu", ["n"], ["y"])],
    x4, [("y", [1, 3, 4, 4])],
    [("w", rng.standard_normal((3, 2, 3, 3))), ("b", [0.1, 0.2, 0.3]), ("s", [1, 2, 3]),
     ("o", [0, 0, 1]), ("m", [0.5, 0, 0]), ("v", [1, 1, 2])]))
write("onnx", "pool_gemm_softmax.onnx", model(
    [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
     helper.make_node("AveragePool", ["p"], ["a"], kernel_shape=[2, 2]),
     helper.make_node("Flatten", ["a"], ["f"]),
     helper.make_node("Gemm", ["f", "g", "gb"], ["l"], transB=1),
     helper.make_node("Softmax", ["l"], ["y"], axis=1)],
    x4, [("y", [1, 3])], [("g", rng.standard_normal((3, 2))), ("gb", [1, 2, 3])]))
write("onnx", "expressions.onnx", model(
    [helper.make_node("Add", ["x", "k"], ["a"]),
     helper.make_node("Mul", ["a", "a"], ["b"]),
     helper.make_node("Sin", ["b"], ["c"]),
     helper.make_node("Sigmoid", ["c"], ["d"]),
     helper.make_node("HardSwish", ["d"], ["e"]),
     helper.make_node("Concat", ["e", "x"], ["y"], axis=1)],
    x4, [("y", [1, 4, 4, 4])], [("k", np.full((1, 2, 1, 1), 0.5))], opset=14))
write("onnx", "matmul_transpose_reshape.onnx", model(
    [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
     helper.make_node("MatMul", ["t", "k"], ["m"]),
     helper.make_node("Reshape", ["m", "shape"], ["y"])],
    [("x", [1, 3, 4])], [("y", [1, 8])],
    [("k", rng.standard_normal((3, 2))), ("shape", [1, 8])]))
write("onnx", "resize_globalpool.onnx", model(
    [helper.make_node("Resize", ["x", "", "scales"], ["r"], mode="nearest"),
     helper.make_node("GlobalAveragePool", ["r"], ["y"])],
    x4, [("y", [1, 2, 1, 1])], [("scales", [1, 1, 2, 2])]))
write("onnx", "upsample_opset9.onnx", model(
    [helper.make_node("Upsample", ["x", "scales"], ["y"], mode="nearest")],
    x4, [("y", [1, 2, 8, 8])], [("scales", [1, 1, 2, 2])], opset=9))
for name in ["test_add", "test_relu", "test_matmul_2d", "test_softmax_axis_1",
             "test_flatten_axis1"]:
    write("onnx", name + ".onnx",
          (pathlib.Path("/usr/share/libonnx-testdata/data/node") / name / "model.onnx")
          .read_bytes())
