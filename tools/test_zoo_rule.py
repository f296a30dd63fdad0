#!/usr/bin/python3
"""The zoos' comparison rule (tools/onnx_zoo_check.py, compare), one case per test:

    /usr/bin/python3 tools/test_zoo_rule.py
"""
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_zoo_check import compare  # noqa: E402

# The exact output: 100 values of size 1 to 100, so the allowed diff is 1e-5 * 100 = 1e-3.
EXACT = np.linspace(1.0, 100.0, 100)
ALLOWED = 1e-3


def off(errors):
    """EXACT plus `errors` (a dict index -> error, or one error for every value), as float32."""
    out = EXACT.copy()
    if isinstance(errors, dict):
        for i, e in errors.items():
            out[i] += e
    else:
        out += errors
    return out.astype(np.float32).astype(np.float64)


class ZooRule(unittest.TestCase):
    def test_within_the_bound_of_pytorch_passes(self):
        ok, diff, allowed, text = compare(off({3: 5e-4}), EXACT)
        self.assertTrue(ok)
        self.assertAlmostEqual(allowed, ALLOWED)
        self.assertEqual(text, "")

    def test_past_the_bound_without_float64_fails(self):
        ok, _, _, _ = compare(off({3: 3e-3}), EXACT)
        self.assertFalse(ok)

    def test_engine_within_the_bound_of_float64_passes(self):
        # PyTorch 8e-4 one way, the engine 8e-4 the other: 1.6e-3 apart, each within 1e-3.
        ok, _, _, text = compare(off({50: -8e-4}), off({50: 8e-4}), EXACT)
        self.assertTrue(ok)
        self.assertTrue(text.startswith("fp64: engine"), text)

    def test_engine_as_far_from_float64_as_pytorch_passes(self):
        # PyTorch 2e-3 off at one value, the engine 2.8e-3 the other way at another:
        # both past the bound; the engine's largest is 1.4x PyTorch's, its rms too.
        ok, _, _, text = compare(off({10: 2.8e-3}), off({90: -2e-3}), EXACT)
        self.assertTrue(ok, text)

    def test_largest_error_over_twice_pytorchs_fails(self):
        ok, _, _, _ = compare(off({10: 4.5e-3}), off({10: 2e-3, 20: 2e-3, 30: 2e-3, 40: 2e-3}),
                              EXACT)
        self.assertFalse(ok, "largest 2.25x PyTorch's, rms below it")

    def test_rms_over_one_and_a_half_pytorchs_fails(self):
        # The same largest error as PyTorch's, but at every value instead of one.
        ok, _, _, _ = compare(off(2e-3), off({10: 2e-3}), EXACT)
        self.assertFalse(ok, "rms 10x PyTorch's")

    def test_not_finite_fails(self):
        got = off({})
        got[7] = np.nan
        self.assertFalse(compare(got, EXACT, EXACT)[0])

    def test_shape_mismatch_fails(self):
        ok, _, _, text = compare(EXACT[:50], EXACT, EXACT)
        self.assertFalse(ok)
        self.assertIn("output shape", text)


if __name__ == "__main__":
    unittest.main()
