"""numpy references for the Ascend C vector instructions, written from the
documented semantics: where a repeat's elements live (block and repeat
strides), the continuous and bit masks, the rounding modes of Cast, and the
pairwise order of the reductions."""
import ml_dtypes
import numpy as np

DTYPES = {
    "float": np.float32, "half": np.float16, "bfloat16": ml_dtypes.bfloat16, "int8": np.int8,
    "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32,
    "int64": np.int64,
}


def is_float(dt):
    return dt in ("float", "half", "bfloat16")


def calc(a):
    """The type arithmetic of an element type runs in (half / bfloat16: float)."""
    return a.astype(np.float32) if a.dtype in (np.float16, ml_dtypes.bfloat16) else a


def binary(op, a, b, s=None):
    """op applied as the vector unit does: in float for half and bfloat16, one
    rounding per instruction."""
    x, y = calc(a), calc(b)
    f = {
        "Add": lambda: x + y, "Sub": lambda: x - y, "Mul": lambda: x * y, "Div": lambda: x / y,
        "Max": lambda: np.maximum(x, y), "Min": lambda: np.minimum(x, y), "And": lambda: x & y,
        "Or": lambda: x | y,
        "AddRelu": lambda: np.maximum(cast_back(x + y, a.dtype).astype(x.dtype), 0),
        "SubRelu": lambda: np.maximum(cast_back(x - y, a.dtype).astype(x.dtype), 0),
    }[op]
    with np.errstate(all="ignore"):
        return cast_back(f(), a.dtype)


def scalar_op(op, a, s):
    x = calc(a)
    v = np.array(s, dtype=a.dtype).astype(x.dtype) if not np.issubdtype(a.dtype, np.integer) else a.dtype.type(s)
    with np.errstate(all="ignore"):
        r = {
            "Adds": lambda: x + v, "Muls": lambda: x * v, "Maxs": lambda: np.maximum(x, v),
            "Mins": lambda: np.minimum(x, v), "LeakyRelu": lambda: np.where(x > 0, x, x * v),
            "ShiftLeft": lambda: np.left_shift(x, v), "ShiftRight": lambda: np.right_shift(x, v),
        }[op]()
    return cast_back(r, a.dtype)


def unary(op, a):
    x = calc(a)
    with np.errstate(all="ignore"):
        r = {
            "Exp": np.exp, "Ln": np.log, "Abs": np.abs, "Sqrt": np.sqrt, "Rsqrt": lambda t: 1 / np.sqrt(t),
            "Reciprocal": lambda t: 1 / t, "Relu": lambda t: np.maximum(t, 0), "Not": np.invert,
        }[op](x)
    return cast_back(r, a.dtype)


def cast_back(r, dtype):
    return np.asarray(r).astype(dtype)


def repeat_index(r, e, blk, rep, per_block):
    """Element e of repeat r: r * rep blocks + (e // per_block) * blk blocks + e % per_block."""
    return (r * rep + (e // per_block) * blk) * per_block + e % per_block


def active(mask, mask_bits, per_repeat):
    if mask_bits is None:
        return list(range(mask))
    lo, hi = mask_bits
    return [e for e in range(per_repeat) if (lo >> e) & 1] + [e + 64 for e in range(per_repeat - 64) if (hi >> e) & 1]


# ---- Cast ---------------------------------------------------------------------------
def round_int(x, mode):
    x = np.asarray(x, dtype=np.float64)
    return {
        "none": np.rint, "rint": np.rint, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
        "round": lambda t: np.trunc(t + np.copysign(0.5, t)),
    }[mode](x)


def round_float(x, dtype, mode):
    """float64 values rounded to the float type dtype by mode, from the two
    neighbours of each value in that type (numpy's cast gives the nearest-even one)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        rne = x.astype(dtype)
    out = rne.copy()
    for i in range(x.size):
        v, r = x.flat[i], rne.flat[i]
        if np.isnan(v) or float(r) == v:
            continue
        if float(r) < v:
            lo, hi = r, _next(r, +1, dtype)
        else:
            lo, hi = _next(r, -1, dtype), r
        if mode in ("none", "rint"):
            res = r
        elif mode == "floor":
            res = lo
        elif mode == "ceil":
            res = hi
        elif mode == "trunc":
            res = lo if v > 0 else hi
        elif mode == "round":
            # Past the largest finite value the next step is where the exponent
            # would continue (IEEE: overflow to infinity from there).
            lo_v, hi_v = float(lo), float(hi)
            if np.isinf(hi_v):
                hi_v = lo_v + (lo_v - float(_next(lo, -1, dtype)))
            if np.isinf(lo_v):
                lo_v = hi_v - (float(_next(hi, +1, dtype)) - hi_v)
            dlo, dhi = v - lo_v, hi_v - v
            res = (hi if v > 0 else lo) if dlo == dhi else (lo if dlo < dhi else hi)
        elif mode == "odd":
            bits = lambda t: int(np.array(t, dtype=dtype).view(np.uint16))
            res = lo if bits(lo) & 1 else hi
        out.flat[i] = res
    return out


def _next(v, direction, dtype):
    u = np.array(v, dtype=dtype).view(np.uint16).astype(np.int64)
    if float(v) == 0:
        u = (1 if direction > 0 else 0x8001)
    elif (float(v) > 0) == (direction > 0):
        u += 1
    else:
        u -= 1
    return np.array(u, dtype=np.uint16).view(dtype)


# ---- reductions -------------------------------------------------------------------------
def tree_repeat(v, f):
    v = list(v)
    while len(v) > 1:
        nxt = [f(v[2 * i], v[2 * i + 1]) for i in range(len(v) // 2)]
        if len(v) % 2:
            nxt.append(v[-1])
        v = nxt
    return v[0]


def tree_sum(a, per_repeat):
    """Each 256-byte repeat reduced by a tree of adjacent pairs, then the
    repeats' results the same way, every addition rounded to a's type."""
    t = a.dtype.type
    add = lambda x, y: t(calc(np.array([x]))[0] + calc(np.array([y]))[0])
    parts = [tree_repeat(a[i:i + per_repeat], add) for i in range(0, len(a), per_repeat)]
    while len(parts) > 1:
        parts = [tree_repeat(parts[i:i + per_repeat], add) for i in range(0, len(parts), per_repeat)]
    return parts[0]
