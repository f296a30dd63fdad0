// Numbers the CLI reports: how far an output is from a reference, and
// latency statistics.
#pragma once

#include <vector>

namespace kuiper::app {

// max |a_i|; 0 for an empty vector.
float MaxAbs(const std::vector<float>& a);

// max |a_i - b_i|. Throws kuiper::ShapeError when the sizes differ. A NaN on
// either side gives NaN, so it can never pass a tolerance check.
float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b);

// The q-th quantile (q in [0, 1]) by linear interpolation between order
// statistics (NumPy's default): Quantile(x, 0.5) is the median. Throws
// kuiper::Error for an empty vector.
double Quantile(std::vector<double> values, double q);

}  // namespace kuiper::app
