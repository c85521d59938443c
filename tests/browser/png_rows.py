#!/usr/bin/env python3
"""Counts the pixel rows of a PNG screenshot that carry timeline colour (standard library only).

usage: png_rows.py FILE.png [X_FRACTION]
Prints "<colored rows> <width> <height>". A row counts when more than 20 pixels in its left
X_FRACTION (default 0.7, the timeline, not the summary panel) are saturated colours, i.e.
max(r,g,b) - min(r,g,b) > 60: event bars, not text, grid lines or the white background.
"""
import struct
import sys
import zlib


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        raise SystemExit(f"{path}: unsupported PNG (depth {depth}, colour type {color}, interlace {interlace})")
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, at = [], bytearray(stride), 0
    for _ in range(height):
        kind = raw[at]
        line = bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else up_left)
                line[i] = (line[i] + pred) & 255
        rows.append(line)
        previous = line
    return width, height, channels, rows


def main():
    path = sys.argv[1]
    fraction = float(sys.argv[2]) if len(sys.argv) > 2 else 0.7
    width, height, channels, rows = read_png(path)
    limit = int(width * fraction)
    colored = 0
    for line in rows:
        count = 0
        for x in range(0, limit * channels, channels):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if max(r, g, b) - min(r, g, b) > 60:
                count += 1
        if count > 20:
            colored += 1
    print(colored, width, height)


if __name__ == "__main__":
    main()
