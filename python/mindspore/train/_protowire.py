"""The protobuf wire format, as much as the .ckpt and MINDIR codecs need:
length-delimited, varint and 32-bit fields out; any message's fields in."""
import numpy as np


def varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def bytes_field(num, payload):
    """Field `num` holding bytes (a str is written as UTF-8)."""
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def int_field(num, v):
    return varint(num << 3) + varint(int(v))


def float32_field(num, v):
    return varint(num << 3 | 5) + np.float32(v).tobytes()


def read_varint(buf, pos):
    shift = result = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(buf):
    """(field number, wire type, value) of a message; value is an int or bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = read_varint(buf, pos)
        elif wt == 2:
            n, pos = read_varint(buf, pos)
            if pos + n > len(buf):
                raise ValueError(f"field {num} runs past the end of its message")
            v, pos = bytes(buf[pos:pos + n]), pos + n
        elif wt == 1:
            v, pos = bytes(buf[pos:pos + 8]), pos + 8
        elif wt == 5:
            v, pos = bytes(buf[pos:pos + 4]), pos + 4
        else:
            raise ValueError(f"unsupported wire type {wt} for field {num}")
        yield num, wt, v
