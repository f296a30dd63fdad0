// Our own reader of the two PNNX files (Tencent/ncnn tools/pnnx) that describe
// a model: the text graph `.pnnx.param` and the zip of weights `.pnnx.bin`.
// The types mirror PNNX's own IR (Parameter, Attribute, Operand, Operator,
// Graph) so that the runtime graph can be built from them one to one.
//
// Every function here throws kuiper::ParseError for a file that does not follow
// the format; the message starts with "<file>:<line>: " (param) or
// "<file>: entry '<name>': " (bin) and says what was expected.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kuiper::pnnx {

// The values are PNNX's own type numbers, as in its Parameter::type.
enum class ParameterType {
  kNull = 0,
  kBool = 1,
  kInt = 2,
  kFloat = 3,
  kString = 4,
  kIntArray = 5,
  kFloatArray = 6,
  kStringArray = 7
};

// One `key=value` of an operator line. Only the member named by `type` is set.
struct Parameter {
  ParameterType type = ParameterType::kNull;
  bool b = false;
  int i = 0;
  float f = 0;
  std::string s;
  std::vector<int> ai;
  std::vector<float> af;
  std::vector<std::string> as;
};

// Reads a parameter value as PNNX writes it:
//   None, () or []             -> kNull
//   True, False                -> kBool
//   -12                        -> kInt
//   1.0, 1e-05, 1.000000e-05, inf, -inf, nan -> kFloat
//   (1,2) or [1,2]             -> kIntArray (every element an integer)
//   (1,2.5)                    -> kFloatArray (numbers, at least one float)
//   (a,b), (1,a)               -> kStringArray (elements kept as written)
//   anything else (zeros, add(@0,@1), the empty value) -> kString
// Throws ParseError (without a file name) for an array that is not closed by
// its matching bracket, an empty or nested array element, or a number that
// does not fit an int or a float.
Parameter ParseParameter(std::string_view text);

// Element types of attributes and operands, spelled in files as
// f32 f64 f16 i64 i32 i16 i8 u8 bool (PNNX's complex and bf16 types are not
// supported and rejected with "unsupported").
enum class DataType { kNull, kF32, kF64, kF16, kI64, kI32, kI16, kI8, kU8, kBool };

// Bytes per element: 4 for kF32, 1 for kBool, 0 for kNull.
size_t DataTypeSize(DataType type);

// The spelling used in files ("f32", ...; "null" for kNull).
std::string_view DataTypeName(DataType type);

// A weight tensor of an operator (`@weight=(64,3,7,7)f32`), its data read
// from the .bin. An empty shape is a scalar: one element.
struct Attribute {
  DataType type = DataType::kNull;
  std::vector<int> shape;
  std::vector<char> data;  // raw little-endian bytes, row-major (PyTorch's order)

  // The float32 elements as floats, in the same row-major order. Throws
  // ParseError for any other type (the graph loader, RuntimeGraph::InitGraphAttrs,
  // converts those to float32 when it loads a graph) or when `data` is not a
  // whole number of elements.
  std::vector<float> ToFloat() const;
};

// A value flowing between operators (a tensor at run time).
struct Operand {
  std::string name;
  DataType type = DataType::kNull;  // kNull unless a `#name=` annotation gave it
  std::vector<int> shape;           // empty unless annotated; -1 for an unknown dim (`?`)
  int producer = -1;                // index of the operator that outputs it
  std::vector<int> consumers;       // operator indices, one entry per use as an input
  // Set by the ONNX importer for a value of a graph it converts as one batch
  // item: the shape the ONNX model declares ((3,4) for `shape` (1,3,4)). The
  // PNNX text has no place for it: Save drops it, files never set it.
  std::optional<std::vector<int>> unbatched_shape;
};

struct Operator {
  std::string type;          // e.g. "nn.Conv2d", "pnnx.Input"
  std::string name;          // unique in the graph; names the operator's .bin entries
  std::vector<int> inputs;   // operand indices, in the order of the line
  std::vector<int> outputs;  // operand indices, in the order of the line
  // One entry per input: the name given by a `$name=operand` item, or "".
  std::vector<std::string> input_names;
  std::map<std::string, Parameter> params;
  std::map<std::string, Attribute> attrs;
  int line = 0;  // line in the .param file, for error messages
};

// Operators in file order; operands in order of first mention. Every operand
// has exactly one producer; the order need not be topological.
struct Graph {
  std::vector<Operator> operators;
  std::vector<Operand> operands;
};

// Reads the text graph. Attributes get their type and shape; their data stays
// empty until LoadBin.
Graph LoadParam(const std::string& param_path);
// The same from the text in memory; `name` stands for the file in messages.
Graph ParseParam(std::string_view text, const std::string& name);

// Fills the data of every attribute from the zip entry
// "<operator name>.<attribute name>", checking its size against the shape.
// Entries no attribute asks for are ignored.
void LoadBin(Graph& graph, const std::string& bin_path);
// The same from the zip's bytes in memory; `name` stands for the file in messages.
void ParseBin(Graph& graph, std::string_view bytes, const std::string& name);

// LoadParam followed by LoadBin.
Graph Load(const std::string& param_path, const std::string& bin_path);

// Writes `graph` as a .pnnx.param text file and a .pnnx.bin zip (entries
// "<operator name>.<attribute name>", stored uncompressed), so that Load reads
// back the same operators, parameters, attributes and annotated operands
// (floats written to round-trip exactly). Operator and operand names must not
// contain spaces or '='. Throws Error when a file cannot be written or a name
// cannot be written.
void Save(const Graph& graph, const std::string& param_path, const std::string& bin_path);

}  // namespace kuiper::pnnx
