// Reader of the PNNX text graph (.pnnx.param):
//
//   7767517                                   magic
//   5 4                                       operator count, operand count
//   nn.Conv2d conv 1 1 0 1 groups=1 @weight=(2,3,1,1)f32 $input=0 #0=(1,3,?,?)f32
//   type      name n_in n_out operands... items...
//
// Items are `key=value` parameters, `@attr=(shape)type` attributes (data in
// the .bin), `$name=operand` input names and `#operand=(shape)type` operand
// annotations. Every check that PNNX's own reader leaves to luck (counts,
// token numbers, dangling operands) is made here, so bad files give a
// ParseError naming the line instead of a crash.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "kuiper/error.hpp"
#include "kuiper/memory_limit.hpp"
#include "kuiper/pnnx.hpp"
#include "pnnx_internal.hpp"

namespace kuiper::pnnx {
namespace {

constexpr std::string_view kMagic = "7767517";
// Counts beyond this are not a model but a corrupt file; refusing them early
// keeps a garbage count from turning into a huge allocation somewhere later.
constexpr int kMaxCount = 1 << 24;

// Splits a line on spaces and tabs; '\r' too, so files saved on Windows read the same.
std::vector<std::string_view> SplitWhitespace(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t pos = 0;
  while (true) {
    pos = line.find_first_not_of(" \t\r", pos);
    if (pos == std::string_view::npos) break;
    size_t end = line.find_first_of(" \t\r", pos);
    if (end == std::string_view::npos) end = line.size();
    tokens.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return tokens;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

// A file may be binary junk; quote at most a readable prefix of it.
std::string Quote(std::string_view text) {
  constexpr size_t kMaxQuote = 40;
  if (text.size() <= kMaxQuote) return fmt::format("'{}'", text);
  return fmt::format("'{}...'", text.substr(0, kMaxQuote));
}

// The whole of `text` as an int, or nullopt if it is not an integer.
// Throws if it is an integer too large for int.
std::optional<int> ParseInt(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ptr != end || text.empty()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    throw ParseError(fmt::format("integer {} does not fit in int", text));
  }
  return value;
}

// The whole of `text` as a float (1.0, 1e-05, -inf, nan, ...), or nullopt.
std::optional<float> ParseFloat(std::string_view text) {
  float value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ptr != end || text.empty()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // from_chars reports underflow (1e-50) and overflow (1e50) alike; strtof
    // rounds the first to 0 or a subnormal, which is what the writer meant.
    value = std::strtof(std::string(text).c_str(), nullptr);
    if (std::isinf(value)) throw ParseError(fmt::format("float {} does not fit in float", text));
  }
  return value;
}

Parameter ParseArray(std::string_view text) {
  const std::string_view inner = text.substr(1, text.size() - 2);
  const std::vector<std::string_view> elements = Split(inner, ',');
  bool all_int = true;
  bool all_number = true;
  for (std::string_view element : elements) {
    if (element.empty()) throw ParseError(fmt::format("empty element in array {}", Quote(text)));
    if (element.find_first_of("()[]") != std::string_view::npos) {
      throw ParseError(fmt::format("nested array {} is not a PNNX parameter", Quote(text)));
    }
    if (ParseInt(element)) continue;
    all_int = false;
    if (!ParseFloat(element)) all_number = false;
  }
  Parameter p;
  for (std::string_view element : elements) {
    if (all_int) {
      p.type = ParameterType::kIntArray;
      p.ai.push_back(*ParseInt(element));
    } else if (all_number) {
      p.type = ParameterType::kFloatArray;
      // Parsing an integer as a float gives the same value, so no second branch.
      p.af.push_back(*ParseFloat(element));
    } else {
      p.type = ParameterType::kStringArray;
      p.as.emplace_back(element);
    }
  }
  return p;
}

// "(1,3,?,?)f32" -> shape {1,3,-1,-1}, type f32. `?` (unknown) is allowed only
// where `allow_unknown`: operands may have dynamic dims, attributes may not.
std::pair<std::vector<int>, DataType> ParseShapeType(std::string_view text, bool allow_unknown) {
  const size_t close = text.find(')');
  if (text.empty() || text[0] != '(' || close == std::string_view::npos) {
    throw ParseError(
        fmt::format("expected (shape)type such as (1,3,224,224)f32, found {}", Quote(text)));
  }
  std::vector<int> shape;
  const std::string_view dims = text.substr(1, close - 1);
  if (!dims.empty()) {
    for (std::string_view dim : Split(dims, ',')) {
      if (dim == "?" && allow_unknown) {
        shape.push_back(-1);
        continue;
      }
      const std::optional<int> value = ParseInt(dim);
      if (!value || *value < 0) {
        throw ParseError(
            fmt::format("dim {} in {} is not {}", Quote(dim), Quote(text),
                        allow_unknown ? "a non-negative integer or ?" : "a non-negative integer"));
      }
      shape.push_back(*value);
    }
  }
  return {shape, internal::ParseDataType(text.substr(close + 1))};
}

// Builds the graph one line at a time. Checks inside an operator line throw a
// bare ParseError; ParseOperatorLine adds "<file>:<line>: " in one place.
class ParamReader {
 public:
  explicit ParamReader(std::string path) : path_(std::move(path)) {}

  Graph Read(std::string_view text) {
    int line_number = 0;
    int operator_count = 0;
    int operand_count = 0;
    // Lines as std::getline splits them: a last line without '\n' still counts.
    for (size_t start = 0; start < text.size();) {
      const size_t end = std::min(text.find('\n', start), text.size());
      const std::string_view line = text.substr(start, end - start);
      start = end + 1;
      ++line_number;
      const std::vector<std::string_view> tokens = SplitWhitespace(line);
      if (line_number == 1) {
        if (tokens.size() != 1 || tokens[0] != kMagic) {
          Fail(1, fmt::format("expected magic {}, found {}", kMagic, Quote(line)));
        }
      } else if (line_number == 2) {
        if (tokens.size() != 2) {
          Fail(2,
               fmt::format("expected '<operator count> <operand count>', found {}", Quote(line)));
        }
        operator_count = ParseCounts(tokens[0], "operator count");
        operand_count = ParseCounts(tokens[1], "operand count");
      } else if (!tokens.empty()) {
        ParseOperatorLine(line_number, tokens);
      }
    }
    if (line_number == 0) Fail(1, fmt::format("expected magic {}, found an empty file", kMagic));
    if (line_number == 1) Fail(2, "expected '<operator count> <operand count>', found end of file");
    CheckCounts(operator_count, operand_count);
    CheckEveryOperandIsProduced();
    return std::move(graph_);
  }

 private:
  [[noreturn]] void Fail(int line, const std::string& what) const {
    throw ParseError(fmt::format("{}:{}: {}", path_, line, what));
  }

  int ParseCounts(std::string_view text, std::string_view what) const {
    std::optional<int> count;
    try {
      count = ParseInt(text);
    } catch (const ParseError&) {
      // too large for int: reported below like any other absurd count
      count = kMaxCount + 1;
    }
    if (!count) Fail(2, fmt::format("{} {} is not an integer", what, Quote(text)));
    if (*count < 0) Fail(2, fmt::format("{} {} is negative", what, text));
    if (*count > kMaxCount) {
      Fail(2, fmt::format("{} {} is larger than the limit {}", what, text, kMaxCount));
    }
    return *count;
  }

  void ParseOperatorLine(int line_number, const std::vector<std::string_view>& tokens) {
    try {
      ParseOperator(line_number, tokens);
    } catch (const ParseError& e) {
      Fail(line_number, e.what());
    }
  }

  void ParseOperator(int line_number, const std::vector<std::string_view>& tokens) {
    if (tokens.size() < 4) {
      throw ParseError(
          fmt::format("expected '<type> <name> <input count> <output count> ...', found {} tokens",
                      tokens.size()));
    }
    const int index = static_cast<int>(graph_.operators.size());
    Operator op;
    op.type = tokens[0];
    op.name = tokens[1];
    op.line = line_number;
    const int n_in = ParseOperandCount(tokens[2], "input count");
    const int n_out = ParseOperandCount(tokens[3], "output count");
    const size_t first_item = 4 + static_cast<size_t>(n_in) + static_cast<size_t>(n_out);
    if (tokens.size() < first_item) {
      throw ParseError(
          fmt::format("{} inputs and {} outputs need {} operand names, but the line has only {}",
                      n_in, n_out, first_item - 4, tokens.size() - 4));
    }
    if (const auto [it, fresh] = operator_lines_.emplace(op.name, line_number); !fresh) {
      throw ParseError(
          fmt::format("operator name '{}' is already used on line {}", op.name, it->second));
    }
    for (size_t t = 4; t < first_item; ++t) {
      const int operand = OperandIndex(tokens[t]);
      const bool is_input = t < 4 + static_cast<size_t>(n_in);
      if (is_input) {
        op.inputs.push_back(operand);
        graph_.operands[operand].consumers.push_back(index);
      } else {
        Operand& produced = graph_.operands[operand];
        if (produced.producer == index) {
          throw ParseError(fmt::format("operand '{}' is listed twice as an output", produced.name));
        }
        if (produced.producer != -1) {
          const Operator& first = graph_.operators[produced.producer];
          throw ParseError(
              fmt::format("operand '{}' is already produced by operator '{}' on line {}",
                          produced.name, first.name, first.line));
        }
        produced.producer = index;
        op.outputs.push_back(operand);
      }
    }
    op.input_names.resize(op.inputs.size());
    for (size_t t = first_item; t < tokens.size(); ++t) ParseItem(tokens[t], op);
    graph_.operators.push_back(std::move(op));
  }

  int ParseOperandCount(std::string_view text, std::string_view what) const {
    const std::optional<int> count = ParseInt(text);
    if (!count || *count < 0) {
      throw ParseError(fmt::format("{} {} is not a non-negative integer", what, Quote(text)));
    }
    return *count;
  }

  // Operands are numbered in order of first mention, wherever that is: an
  // input may be named before the line that produces it.
  int OperandIndex(std::string_view name) {
    if (name.find('=') != std::string_view::npos) {
      throw ParseError(fmt::format(
          "operand name {} contains '=': do the input and output counts match the operands?",
          Quote(name)));
    }
    const auto [it, fresh] =
        operand_index_.emplace(std::string(name), static_cast<int>(graph_.operands.size()));
    if (fresh) {
      Operand operand;
      operand.name = name;
      graph_.operands.push_back(std::move(operand));
    }
    return it->second;
  }

  void ParseItem(std::string_view item, Operator& op) {
    const size_t equals = item.find('=');
    const bool has_sigil = !item.empty() && (item[0] == '@' || item[0] == '$' || item[0] == '#');
    if (equals == std::string_view::npos || equals == (has_sigil ? 1u : 0u)) {
      throw ParseError(
          fmt::format("expected key=value, @attribute=(shape)type, $input=operand or "
                      "#operand=(shape)type, found {}",
                      Quote(item)));
    }
    const std::string key(item.substr(has_sigil ? 1 : 0, equals - (has_sigil ? 1 : 0)));
    const std::string_view value = item.substr(equals + 1);
    switch (item[0]) {
      case '@':
        return ParseAttribute(key, value, op);
      case '$':
        return ParseInputName(key, value, op);
      case '#':
        return ParseAnnotation(key, value, op);
      default:
        return ParseParam(key, value, op);
    }
  }

  void ParseParam(const std::string& key, std::string_view value, Operator& op) {
    Parameter parameter;
    try {
      parameter = ParseParameter(value);
    } catch (const ParseError& e) {
      throw ParseError(fmt::format("parameter '{}': {}", key, e.what()));
    }
    if (!op.params.emplace(key, std::move(parameter)).second) {
      throw ParseError(fmt::format("parameter '{}' appears twice", key));
    }
  }

  void ParseAttribute(const std::string& key, std::string_view value, Operator& op) {
    Attribute attr;
    try {
      std::tie(attr.shape, attr.type) = ParseShapeType(value, /*allow_unknown=*/false);
    } catch (const ParseError& e) {
      throw ParseError(fmt::format("attribute @{}: {}", key, e.what()));
    }
    if (attr.type == DataType::kNull) {
      throw ParseError(fmt::format("attribute @{} needs a data type, found null", key));
    }
    // Checked here, before LoadBin allocates anything for the data.
    if (!internal::ElementCount(attr.shape)) {
      throw ParseError(
          fmt::format("attribute @{}: shape {} has more than 2^31 elements", key, Quote(value)));
    }
    if (!op.attrs.emplace(key, std::move(attr)).second) {
      throw ParseError(fmt::format("attribute @{} appears twice", key));
    }
  }

  // `$input=0` names the input that is operand 0. An operand used twice as an
  // input (add(x, x)) is named position by position.
  void ParseInputName(const std::string& key, std::string_view operand, Operator& op) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (graph_.operands[op.inputs[i]].name == operand && op.input_names[i].empty()) {
        op.input_names[i] = key;
        return;
      }
    }
    throw ParseError(
        fmt::format("${}={} names operand '{}', which is not an unnamed input of "
                    "this operator",
                    key, operand, operand));
  }

  void ParseAnnotation(const std::string& operand, std::string_view value, Operator& op) {
    const auto it = operand_index_.find(operand);
    const bool on_this_line =
        it != operand_index_.end() &&
        (std::find(op.inputs.begin(), op.inputs.end(), it->second) != op.inputs.end() ||
         std::find(op.outputs.begin(), op.outputs.end(), it->second) != op.outputs.end());
    if (!on_this_line) {
      throw ParseError(fmt::format(
          "#{} annotates operand '{}', which is not an input or output of this operator", operand,
          operand));
    }
    Operand& annotated = graph_.operands[it->second];
    try {
      // PNNX writes the same annotation on the producer's and every consumer's
      // line; they agree, so the last one simply wins.
      std::tie(annotated.shape, annotated.type) = ParseShapeType(value, /*allow_unknown=*/true);
    } catch (const ParseError& e) {
      throw ParseError(fmt::format("annotation #{}: {}", operand, e.what()));
    }
  }

  void CheckCounts(int operator_count, int operand_count) const {
    if (graph_.operators.size() != static_cast<size_t>(operator_count)) {
      Fail(2, fmt::format("the counts line says {} operators, but the file has {} operator lines",
                          operator_count, graph_.operators.size()));
    }
    if (graph_.operands.size() != static_cast<size_t>(operand_count)) {
      Fail(2, fmt::format("the counts line says {} operands, but the operator lines name {}",
                          operand_count, graph_.operands.size()));
    }
  }

  // Only now, with every line read, can a missing producer be told apart from
  // a producer that comes later in the file.
  void CheckEveryOperandIsProduced() const {
    for (const Operand& operand : graph_.operands) {
      if (operand.producer != -1) continue;
      // Every operand is mentioned somewhere; unproduced ones only as inputs.
      const Operator& consumer = graph_.operators[operand.consumers.front()];
      Fail(consumer.line, fmt::format("operand '{}' is an input of operator '{}', but no operator "
                                      "produces it",
                                      operand.name, consumer.name));
    }
  }

  std::string path_;
  Graph graph_;
  std::unordered_map<std::string, int> operand_index_;
  std::unordered_map<std::string, int> operator_lines_;  // operator name -> line
};

}  // namespace

Parameter ParseParameter(std::string_view text) {
  Parameter p;
  if (text == "None" || text == "()" || text == "[]") return p;
  if (text == "True" || text == "False") {
    p.type = ParameterType::kBool;
    p.b = text == "True";
    return p;
  }
  // Only a value that starts with a bracket is an array: add(@0,@1) is a string.
  if (!text.empty() && (text[0] == '(' || text[0] == '[')) {
    const char close = text[0] == '(' ? ')' : ']';
    if (text.size() < 2 || text.back() != close) {
      throw ParseError(fmt::format("array {} does not end with '{}'", Quote(text), close));
    }
    return ParseArray(text);
  }
  if (const std::optional<int> i = ParseInt(text)) {
    p.type = ParameterType::kInt;
    p.i = *i;
  } else if (const std::optional<float> f = ParseFloat(text)) {
    p.type = ParameterType::kFloat;
    p.f = *f;
  } else {
    p.type = ParameterType::kString;
    p.s = text;
  }
  return p;
}

Graph ParseParam(std::string_view text, const std::string& name) {
  return ParamReader(name).Read(text);
}

Graph LoadParam(const std::string& param_path) {
  std::ifstream in(param_path, std::ios::binary);
  if (!in) throw ParseError(fmt::format("{}: cannot open PNNX param file", param_path));
  // The whole file is read into memory, so its size is checked first.
  std::error_code error;
  const uint64_t size = std::filesystem::file_size(param_path, error);
  if (!error) CheckMemory(size, fmt::format("{}: reading the whole file", param_path));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseParam(text, param_path);
}

}  // namespace kuiper::pnnx
