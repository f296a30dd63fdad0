// Where a model's files are: MODEL arguments may be a .pnnx.param path, a
// directory holding one, or the name of a generated model (resnet18, yolov5s).
#pragma once

#include <string>

namespace kuiper::app {

// The command that writes the default models (run from the repository root).
inline constexpr const char* kMakeModelsCommand = "/usr/bin/python3 tools/make_models.py";

struct ModelFiles {
  std::string name;   // "resnet18" for .../resnet18.pnnx.param
  std::string dir;    // the folder holding the files
  std::string param;  // <dir>/<name>.pnnx.param
  std::string bin;    // <dir>/<name>.pnnx.bin
  std::string onnx;   // set instead of param/bin for an ONNX model (path/to/x.onnx)
};

// The folder generated models live in: $KUIPER_MODELS if set, else
// <repository>/build/models, where tools/make_models.py writes by default.
std::string ModelsRoot();

// Resolves MODEL:
//   path/to/x.pnnx.param -> that file (and x.pnnx.bin beside it)
//   path/to/x.onnx       -> that ONNX model, converted when loaded
//   path/to/dir          -> dir/<dir name>.pnnx.param
//   name (no '/')        -> ModelsRoot()/name/name.pnnx.param
// Throws kuiper::Error when the .param or .bin file is missing (for generated
// models, naming the command that makes them) or when a file path does not
// end in .pnnx.param.
// `need_bin` false accepts a missing .pnnx.bin (enough to inspect a graph).
ModelFiles ResolveModel(const std::string& model, bool need_bin = true);

// The same, where `model` may be empty to mean the default model `name`.
ModelFiles ResolveModelOr(const std::string& model, const std::string& name);

// A line saying where the weights come from: generated models are seeded
// random weights, not a pretrained network, so their classes mean nothing.
std::string WeightsNote(const ModelFiles& files);

}  // namespace kuiper::app
