// Stretch task of course5_layers (optional, label course5_stretch): a layer
// with a parameter, nn.LeakyReLU. See course5_layers/README.md, "Stretch: a
// layer with a parameter". Compiled into the stretch test program only.
#include <memory>
#include <vector>

#include "kuiper/layer.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper {

// TODO(course5 stretch): a layer computing y = x for x >= 0 and
// y = negative_slope * x for x < 0, with the checks of SigmoidLayer::Forward;
// its creator reads negative_slope from the operator; register it as
// nn.LeakyReLU and F.leaky_relu.
// ---- your code begins ----
// ---- your code ends ----

}  // namespace kuiper
