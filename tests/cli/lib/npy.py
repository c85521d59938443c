"""The .npy helpers of the CLI tests, on numpy (run the scripts with /usr/bin/python3: Debian's
python3-numpy)."""
import numpy as np


def write_npy(path, shape, values, descr='<f4'):
    """Writes `values` (C order) as an .npy of `shape` and dtype `descr` with numpy.save."""
    np.save(path, np.asarray(values, dtype=np.dtype(descr)).reshape(shape))


def write_matrix(path, rows, cols, f, descr='<f4'):
    """Writes the rows x cols matrix f(i, j)."""
    write_npy(path, (rows, cols), [f(i, j) for i in range(rows) for j in range(cols)], descr)


def read_npy(path):
    """Reads a C-order float32 .npy with numpy.load: (shape tuple, list of values)."""
    array = np.load(path, allow_pickle=False)
    assert array.dtype == np.float32 and (array.flags.c_contiguous or array.ndim < 2), (path, array.dtype)
    return tuple(array.shape), array.ravel().tolist()
