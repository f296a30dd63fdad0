// Mish, y = x * tanh(softplus(x)), from all three doors: ONNX's Mish, PNNX's
// nn.Mish and F.mish (one row of kuiper/unary_ops.def), each against PyTorch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kuiper/layer.hpp"
#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

const std::vector<float> kMishInputs = {-20.f, -6.f, -2.f, -1.f, -0.5f, -0.1f, 0.f,
                                        0.1f,  0.5f, 1.f,  2.f,  6.f,   20.f,  40.f};
// /usr/bin/python3 -c "import torch; print(torch.nn.functional.mish(torch.tensor(
//   [-20., -6., -2., -1., -0.5, -0.1, 0., 0.1, 0.5, 1., 2., 6., 20., 40.])).tolist())"
const std::vector<float> kMishTorch = {-4.1223074731533416e-08f,
                                       -0.014854080975055695f,
                                       -0.2525014579296112f,
                                       -0.3034014403820038f,
                                       -0.22074376046657562f,
                                       -0.056788571178913116f,
                                       0.0f,
                                       0.06317941844463348f,
                                       0.37524524331092834f,
                                       0.8650983572006226f,
                                       1.9439589977264404f,
                                       5.999926567077637f,
                                       20.0f,
                                       40.0f};

// The expression rounds exp, add, log, tanh and mul each to float32: a few
// float32 ulps of the result, within 1e-6 relative.
void ExpectMishNear(const std::vector<float>& got, const std::string& door) {
  ASSERT_EQ(got.size(), kMishTorch.size()) << door;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], kMishTorch[i], 1e-6f * std::max(1.f, std::abs(kMishTorch[i])))
        << door << " at x = " << kMishInputs[i];
  }
}

TEST(Mish, OnnxMishMatchesPyTorch) {
  const int64_t n = static_cast<int64_t>(kMishInputs.size());
  OneNodeModel g("Mish", 18);
  g.Input("X", {1, n}).Output("Y", {1, n});
  ExpectMishNear(RunGraph(ConvertOnnx(g.model), {kMishInputs}), "ONNX Mish");
}

TEST(Mish, PnnxMishLayersMatchPyTorch) {
  for (const std::string type : {"nn.Mish", "F.mish"}) {
    RuntimeOperator op;
    op.type = type;
    op.name = "mish";
    sftensor x = TensorCreate({static_cast<uint32_t>(kMishInputs.size())});
    x->Fill(kMishInputs);
    std::vector<sftensor> outputs(1);
    ASSERT_EQ(LayerRegisterer::CreateLayer(op)->Forward({x}, outputs), InferStatus::kInferSuccess);
    ExpectMishNear(outputs[0]->values(), type);
  }
}

}  // namespace
}  // namespace kuiper::testing
