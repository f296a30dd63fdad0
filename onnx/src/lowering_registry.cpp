// The table of lowerings, filled by the registrations in lower_*.cpp.
#include "lowering_registry.hpp"

#include <cstdio>
#include <cstdlib>

namespace kuiper::onnx_import {
namespace {

// Built on first use: the registrations run during static initialisation, in
// an order across files that C++ leaves open.
std::map<std::string, LoweringEntry>& MutableLowerings() {
  static std::map<std::string, LoweringEntry> table;
  return table;
}

}  // namespace

const std::map<std::string, LoweringEntry>& Lowerings() { return MutableLowerings(); }

const ConstantInputs& ConstantInputsOf(const onnx::NodeProto& node) {
  static const ConstantInputs kNone;
  if (!node.domain().empty() && node.domain() != "ai.onnx") return kNone;
  const auto it = Lowerings().find(node.op_type());
  return it == Lowerings().end() ? kNone : it->second.constant_inputs;
}

LoweringRegisterer::LoweringRegisterer(std::initializer_list<const char*> types, Lowering lower,
                                       const std::string& constraints,
                                       ConstantInputs constant_inputs) {
  for (const char* type : types) {
    const bool fresh =
        MutableLowerings().emplace(type, LoweringEntry{lower, constraints, constant_inputs}).second;
    if (!fresh) {
      // Before main, with nobody to catch an exception: say which and stop.
      std::fprintf(stderr, "kuiper_onnx: ONNX op type %s is registered twice\n", type);
      std::abort();
    }
  }
}

}  // namespace kuiper::onnx_import
