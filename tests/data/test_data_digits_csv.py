"""lib/data/images.load_digits reads scikit-learn's digits file without importing
scikit-learn: the same images and labels as `sklearn.datasets.load_digits`."""
import os
import subprocess
import sys

import numpy as np

from lib.data import images

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_digits_from_the_csv_equal_scikit_learns_loader():
    from sklearn.datasets import load_digits

    assert images.digits_csv() is not None            # the file is where the loader looks
    ours, theirs = images.load_digits(), load_digits()
    np.testing.assert_array_equal(ours.images[..., 0], theirs.images.astype(np.float32) / 16.0)
    np.testing.assert_array_equal(ours.labels, theirs.target)
    assert ours.labels.dtype == np.int32 and ours.images.dtype == np.float32


def test_loading_digits_imports_no_scikit_learn():
    code = ("import sys\nfrom lib.data import images\nds = images.load_digits()\n"
            "print(len(ds), sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    assert out.stdout.split() == ["1797", "[]"]
