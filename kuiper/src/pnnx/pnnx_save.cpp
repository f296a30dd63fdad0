// Writer of the two PNNX files, the mirror of pnnx_param.cpp and pnnx_bin.cpp:
// what Save writes, Load reads back the same. Used by the ONNX importer
// (`kuiper convert model.onnx`) to keep a converted model as PNNX.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zip.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "kuiper/error.hpp"
#include "kuiper/pnnx.hpp"
#include "pnnx_internal.hpp"

namespace kuiper::pnnx {
namespace {

// The shortest text that reads back as the same float, and as a float: "1"
// would read back as an int, so it becomes "1.0".
std::string FloatText(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string ParameterText(const Parameter& p) {
  switch (p.type) {
    case ParameterType::kNull:
      return "None";
    case ParameterType::kBool:
      return p.b ? "True" : "False";
    case ParameterType::kInt:
      return std::to_string(p.i);
    case ParameterType::kFloat:
      return FloatText(p.f);
    case ParameterType::kString:
      return p.s;
    case ParameterType::kIntArray:
      return fmt::format("({})", fmt::join(p.ai, ","));
    case ParameterType::kFloatArray: {
      std::vector<std::string> items;
      for (float f : p.af) items.push_back(FloatText(f));
      return fmt::format("({})", fmt::join(items, ","));
    }
    case ParameterType::kStringArray:
      return fmt::format("({})", fmt::join(p.as, ","));
  }
  return "None";
}

void CheckName(const std::string& name, const std::string& what) {
  if (name.empty() || name.find_first_of(" \t\r\n=") != std::string::npos) {
    throw Error(
        fmt::format("PNNX save: {} name '{}' is empty or holds a space or '='", what, name));
  }
}

struct SaveZipDiscard {
  void operator()(zip_t* zip) const { zip_discard(zip); }
};

void SaveBin(const Graph& graph, const std::string& bin_path) {
  int code = 0;
  std::unique_ptr<zip_t, SaveZipDiscard> zip(
      zip_open(bin_path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (!zip) throw Error(fmt::format("{}: cannot create the PNNX bin file", bin_path));
  for (const Operator& op : graph.operators) {
    for (const auto& [key, attr] : op.attrs) {
      const std::string entry = op.name + "." + key;
      // The buffers live in `graph` until zip_close, which reads them.
      zip_source_t* source = zip_source_buffer(zip.get(), attr.data.data(), attr.data.size(), 0);
      const zip_int64_t index =
          source ? zip_file_add(zip.get(), entry.c_str(), source, ZIP_FL_OVERWRITE) : -1;
      if (index < 0) {
        if (source) zip_source_free(source);
        throw Error(
            fmt::format("{}: cannot add entry '{}': {}", bin_path, entry, zip_strerror(zip.get())));
      }
      zip_set_file_compression(zip.get(), index, ZIP_CM_STORE, 0);
    }
  }
  if (zip_close(zip.get()) != 0) {
    throw Error(
        fmt::format("{}: cannot write the PNNX bin file: {}", bin_path, zip_strerror(zip.get())));
  }
  zip.release();  // closed: nothing left to discard
}

}  // namespace

void Save(const Graph& graph, const std::string& param_path, const std::string& bin_path) {
  std::ofstream out(param_path);
  if (!out) throw Error(fmt::format("{}: cannot create the PNNX param file", param_path));
  out << "7767517\n" << graph.operators.size() << ' ' << graph.operands.size() << '\n';
  const auto operand = [&](int index) -> const Operand& {
    if (index < 0 || static_cast<size_t>(index) >= graph.operands.size()) {
      throw Error(fmt::format("PNNX save: operand index {} out of range", index));
    }
    return graph.operands[index];
  };
  for (const Operator& op : graph.operators) {
    CheckName(op.type, "operator type");
    CheckName(op.name, "operator");
    std::string line =
        fmt::format("{:<24} {:<24} {} {}", op.type, op.name, op.inputs.size(), op.outputs.size());
    for (int i : op.inputs) line += " " + operand(i).name;
    for (int i : op.outputs) line += " " + operand(i).name;
    for (const auto& [key, p] : op.params) line += fmt::format(" {}={}", key, ParameterText(p));
    for (const auto& [key, attr] : op.attrs) {
      line += fmt::format(" @{}={}", key, internal::ShapeText(attr.shape, attr.type));
    }
    for (size_t k = 0; k < op.input_names.size() && k < op.inputs.size(); ++k) {
      if (!op.input_names[k].empty()) {
        line += fmt::format(" ${}={}", op.input_names[k], operand(op.inputs[k]).name);
      }
    }
    std::vector<int> annotated = op.inputs;
    annotated.insert(annotated.end(), op.outputs.begin(), op.outputs.end());
    for (int i : annotated) {
      const Operand& o = operand(i);
      CheckName(o.name, "operand");
      if (o.type != DataType::kNull) {
        line += fmt::format(" #{}={}", o.name, internal::ShapeText(o.shape, o.type));
      }
    }
    out << line << '\n';
  }
  out.close();
  if (!out) throw Error(fmt::format("{}: cannot write the PNNX param file", param_path));
  SaveBin(graph, bin_path);
}

}  // namespace kuiper::pnnx
