"""Times scikit-learn's IsotonicRegression on one curve, for tools/bench/calibrate.R.

Usage: python3 calibrate_sklearn.py FILE N REPS
FILE holds N scores then N labels, as little-endian doubles (R's writeBin). Prints the median
seconds of REPS fits, each from the unsorted scores (the fit sorts them and pools ties), and the
scikit-learn version.
"""
import statistics
import sys
import time

import numpy as np
import sklearn
from sklearn.isotonic import IsotonicRegression


def main():
    path, n, reps = sys.argv[1], int(float(sys.argv[2])), int(sys.argv[3])
    data = np.fromfile(path, dtype="<f8")
    score, label = data[:n], data[n:2 * n]
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        IsotonicRegression(out_of_bounds="clip").fit(score, label)
        times.append(time.perf_counter() - start)
    print(f"{statistics.median(times):.4f} {sklearn.__version__}")


if __name__ == "__main__":
    main()
