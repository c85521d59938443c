"""Minimal .npy reading and writing for the CLI tests (standard library only: numpy is not installed)."""
import ast
import struct

_CODES = {'<f4': 'f', '<f8': 'd', '<f2': 'e'}


def write_npy(path, shape, values, descr='<f4'):
    """Writes `values` (C order) as a version-1 .npy of `shape` and dtype `descr`."""
    dims = ''.join('%d, ' % s for s in shape)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    with open(path, 'wb') as out:
        out.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        out.write(struct.pack('<%d%s' % (len(values), _CODES[descr]), *values))


def write_matrix(path, rows, cols, f, descr='<f4'):
    """Writes the rows x cols matrix f(i, j)."""
    write_npy(path, (rows, cols), [f(i, j) for i in range(rows) for j in range(cols)], descr)


def read_npy(path):
    """Reads a C-order float32 .npy (versions 1-3): (shape tuple, list of values)."""
    data = open(path, 'rb').read()
    assert data[:6] == b'\x93NUMPY', path + ': not an npy file'
    size = 2 if data[6] == 1 else 4
    hlen = struct.unpack('<H' if size == 2 else '<I', data[8:8 + size])[0]
    start = 8 + size + hlen
    header = ast.literal_eval(data[8 + size:start].decode('latin1'))
    assert header['descr'] == '<f4' and header['fortran_order'] is False, header
    shape = tuple(header['shape'])
    count = 1
    for s in shape:
        count *= s
    return shape, list(struct.unpack('<%df' % count, data[start:start + 4 * count]))
