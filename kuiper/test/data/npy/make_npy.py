# Regenerates the .npy fixtures of kuiper/test/test_npy.cpp with NumPy itself.
# Run with Debian's /usr/bin/python3 (python3-numpy).
import pathlib
import numpy as np

here = pathlib.Path(__file__).parent
np.save(here / "arange_2x3_f4.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
np.save(here / "f8.npy", np.array([[0.5, -1.25]], dtype=np.float64))
np.save(here / "i8.npy", np.array([[7, -3]], dtype=np.int64))
