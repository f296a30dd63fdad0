// Where a model's files are: MODEL arguments may be a .pnnx.param path, a
// directory holding one, or the name of a generated model (resnet18, yolov5s).
#pragma once

#include <string>
#include <vector>

namespace kuiper::app {

// The commands that write the generated models (run from the repository root):
// the seeded ones (resnet18, yolov5s, tiny_*) and the ones trained on shapes.
inline constexpr const char* kMakeModelsCommand = "/usr/bin/python3 tools/make_models.py";
inline constexpr const char* kTrainShapesCommand = "/usr/bin/python3 tools/train_shapes.py";

// The models trained on generated shapes by tools/train_shapes.py.
inline constexpr const char* kShapesClassifier = "shapes_resnet18";
inline constexpr const char* kShapesDetector = "shapes_yolov5";

// The command that makes the generated model `name`.
const char* CommandMaking(const std::string& name);

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

// The same, where an empty `model` means the first generated model of
// `defaults` whose files exist (classify: shapes_resnet18, then resnet18).
// When none exists, the error names each default and the command making it.
ModelFiles ResolveModelOr(const std::string& model, const std::vector<std::string>& defaults);

// A line saying where the weights come from: the first line of about.txt beside
// the model when there is one (tools/train_shapes.py writes it: how the model
// was trained and what it scores); otherwise a warning that generated weights
// are seeded random numbers, not a pretrained network, so the classes mean nothing.
std::string WeightsNote(const ModelFiles& files);

// The class names beside the model: classes.txt, else `fallback`
// (imagenet_classes.txt, coco_classes.txt); empty when neither exists.
std::vector<std::string> LabelsBeside(const ModelFiles& files, const std::string& fallback);

}  // namespace kuiper::app
