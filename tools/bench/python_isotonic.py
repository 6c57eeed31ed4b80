"""Times scikit-learn's isotonic regression on the data of tools/bench/python.R.

Usage: python3 python_isotonic.py FILE N REPS KIND
FILE holds N values of x, N of y and N of w, as little-endian doubles (R's writeBin). KIND is
"sorted" (sklearn.isotonic.isotonic_regression(y, sample_weight=w): x is 1..n) or "unsorted"
(IsotonicRegression().fit(x, y, sample_weight=w), which sorts x and pools its ties, then
.predict(x) for the fitted values in input order, as isoreg_gpu() returns them). Prints the
median seconds of REPS fits, the fit of the last run (as doubles to FILE.fit) and the
scikit-learn version.
"""
import statistics
import sys
import time

import numpy as np
import sklearn
from sklearn.isotonic import IsotonicRegression, isotonic_regression


def main():
    path, n, reps, kind = sys.argv[1], int(float(sys.argv[2])), int(sys.argv[3]), sys.argv[4]
    data = np.fromfile(path, dtype="<f8")
    x, y, w = data[:n], data[n:2 * n], data[2 * n:3 * n]
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        if kind == "sorted":
            fit = isotonic_regression(y, sample_weight=w)
        else:
            fit = IsotonicRegression().fit(x, y, sample_weight=w).predict(x)
        times.append(time.perf_counter() - start)
    np.asarray(fit, dtype="<f8").tofile(path + ".fit")
    print(f"{statistics.median(times):.6f} {sklearn.__version__}")


if __name__ == "__main__":
    main()
