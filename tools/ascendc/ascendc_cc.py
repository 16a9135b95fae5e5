#!/usr/bin/env python3
"""ascendc++: compiles Ascend C sources (kernels and the host code that launches
them) with the system C++ compiler, for the CPU (docs/ascendc.md).

  ascendc++ [--fast | --check] [--launch-header-dir DIR] [compiler flags] FILES... [-o OUT]

It
  * rewrites the launch syntax `kernel<<<blockDim, l2ctrl, stream>>>(args)` into a
    call of the launcher (line numbers kept, errors name the original file);
  * writes `aclrtlaunch_<kernel>.h` for every kernel a source defines (what
    ACLRT_LAUNCH_KERNEL(kernel)(blockDim, stream, args...) needs) and defines
    `aclrtlaunch_<kernel>` beside the kernel;
  * defines, for aclrtLaunchKernel, an entry per kernel that takes the packed
    arguments (build kernels into a library with -shared -fPIC for
    aclrtBinaryLoadFromFile);
  * adds the Ascend C include directories and, when linking, libascendc.so and
    libascendcl.so.
Kernels are compiled for this machine's CPU (-march=native) unless -march or
-mcpu is given. --fast compiles the per-access checks out (structural ones stay); --check keeps
them (the default unless -DNDEBUG is given). Everything else goes to the
compiler unchanged ($CXX, default g++).
"""
import os
import re
import subprocess
import sys
import tempfile

SOURCE_EXT = (".cpp", ".cc", ".cxx", ".c++", ".C", ".cu", ".asc")
KERNEL_RE = re.compile(
    r'(?:extern\s+"C"\s+)?(?:__global__\s+__aicore__|__aicore__\s+__global__)\s+void\s+([A-Za-z_]\w*)\s*'
    r'\(([^)]*)\)\s*\{')


def locate():
    """Include and library directories: set by CMake in the configured copy, or
    found from this file's place in the source tree."""
    inc = "@OC_INCLUDE_DIR@"
    lib = "@OC_LIB_DIR@"
    if inc.startswith("@"):
        root = os.path.abspath(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", ".."))
        inc = os.path.join(root, "include")
        lib = os.environ.get("OPENCANN_LIB_DIR", os.path.join(root, "build"))
    return inc, lib


def strip_code(text):
    """The text with comments and string/char literals blanked (same length), so
    that scanning for syntax never matches inside them."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


class SyntaxProblem(Exception):
    pass


def rewrite_chevrons(text, path):
    """kernel<<<a, b, c>>>(...) -> ::AscendC::ocimpl::OcChevron("kernel", kernel, a, b, c)(...)"""
    code = strip_code(text)
    out, pos = [], 0
    while True:
        i = code.find("<<<", pos)
        if i < 0:
            break
        j = i
        while j > 0 and code[j - 1] in " \t":
            j -= 1
        k = j
        while k > 0 and (code[k - 1].isalnum() or code[k - 1] in "_:"):
            k -= 1
        name = code[k:j]
        if not name or not (name[0].isalpha() or name[0] in "_:"):
            raise SyntaxProblem(f"{path}:{text.count(chr(10), 0, i) + 1}: '<<<' without a kernel name before it")
        end = code.find(">>>", i + 3)
        if end < 0:
            raise SyntaxProblem(f"{path}:{text.count(chr(10), 0, i) + 1}: '<<<' without a closing '>>>'")
        config = split_top(text[i + 3:end])
        if len(config) != 3:
            raise SyntaxProblem(f"{path}:{text.count(chr(10), 0, i) + 1}: {name}<<<...>>> takes blockDim, l2ctrl "
                                f"and stream, not {len(config)} values")
        newlines = text.count("\n", k, end + 3)
        out.append(text[pos:k])
        out.append(f'::AscendC::ocimpl::OcChevron("{name.split("::")[-1]}", {name}, {config[0]}, '
                   f'{config[1]}, {config[2]})' + "\n" * newlines)
        pos = end + 3
    out.append(text[pos:])
    return "".join(out)


def kernels_in(text):
    """[(name, [(type, param_name), ...])] of the kernels defined in a source."""
    found = []
    for m in KERNEL_RE.finditer(strip_code(text)):
        params = []
        body = m.group(2).strip()
        if body and body != "void":
            for p in split_top(body):
                words = re.findall(r"[A-Za-z_]\w*|\*|&|::", p)
                if not words:
                    continue
                pname = words[-1]
                ptype = p[: p.rfind(pname)].strip()
                params.append((ptype, pname))
        found.append((m.group(1), params))
    return found


def is_pointer(ptype):
    return "*" in ptype or "GM_ADDR" in ptype


def launch_header(name, params):
    args = "".join(f", {'void*' if is_pointer(t) else t} {n}" for t, n in params)
    guard = "OC_ACLRTLAUNCH_" + name.upper() + "_H"
    return (f"/* Written by ascendc++ (OpenCANN) for the kernel {name}. */\n"
            f"#ifndef {guard}\n#define {guard}\n#include <stdint.h>\n#include \"acl/acl_base.h\"\n"
            "#ifndef ACLRT_LAUNCH_KERNEL\n#define ACLRT_LAUNCH_KERNEL(kernel_func) aclrtlaunch_##kernel_func\n#endif\n"
            "#ifdef __cplusplus\nextern \"C\"\n#endif\n"
            f"uint32_t aclrtlaunch_{name}(uint32_t blockDim, aclrtStream stream{args});\n#endif\n")


def launch_definition(name, params):
    args = "".join(f", {'void*' if is_pointer(t) else t} {n}" for t, n in params)
    names = ", ".join(n for _, n in params)
    call = "".join(f", {n}" for _, n in params)
    return (f'\nextern "C" uint32_t aclrtlaunch_{name}(uint32_t blockDim, void* stream{args}) {{\n'
            f'  return ::AscendC::ocimpl::Launch("{name}", "{names}", {name}, blockDim, stream{call});\n}}\n'
            f'extern "C" __attribute__((visibility("default"))) uint32_t __ocasc_argsentry_{name}('
            f'uint32_t blockDim, void* stream, const void* args, size_t size) {{\n'
            f'  return ::AscendC::ocimpl::LaunchPacked("{name}", {name}, blockDim, stream, args, size);\n}}\n')


def main(argv):
    inc, lib = locate()
    cxx = os.environ.get("CXX", "g++")
    mode, header_dir, args = None, None, []
    it = iter(argv)
    for a in it:
        if a == "--fast":
            mode = 0
        elif a == "--check":
            mode = 1
        elif a == "--launch-header-dir":
            header_dir = next(it, None)
        elif a.startswith("--launch-header-dir="):
            header_dir = a.split("=", 1)[1]
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            args.append(a)
    sources = [a for a in args if a.endswith(SOURCE_EXT) and os.path.isfile(a)]
    compile_only = any(a in ("-c", "-S", "-E") for a in args)
    tmp = tempfile.mkdtemp(prefix="ascendc++")
    gen_inc = os.path.join(tmp, "include")
    os.makedirs(gen_inc)
    texts = {}
    try:
        for s in sources:
            with open(s, encoding="utf-8", errors="surrogateescape") as f:
                texts[s] = f.read()
        for s, text in texts.items():
            for name, params in kernels_in(text):
                for d in filter(None, (gen_inc, header_dir)):
                    os.makedirs(d, exist_ok=True)
                    with open(os.path.join(d, f"aclrtlaunch_{name}.h"), "w") as f:
                        f.write(launch_header(name, params))
        new_args = []
        for a in args:
            if a in texts:
                text = texts[a]
                body = rewrite_chevrons(text, a)
                body += "".join(launch_definition(n, p) for n, p in kernels_in(text))
                if body != text:
                    full = os.path.abspath(a)
                    out = os.path.join(tmp, f"{len(new_args)}_{os.path.basename(a)}")
                    with open(out, "w", encoding="utf-8", errors="surrogateescape") as f:
                        f.write(f'#line 1 "{full}"\n' + body)
                    new_args += ["-iquote", os.path.dirname(full), out]
                    continue
            new_args.append(a)
        cmd = [cxx]
        if not any(a.startswith("-std=") for a in args):
            cmd.append("-std=c++17")
        if not any(re.match(r"-O[0-3sgz]?$", a) for a in args):
            cmd.append("-O2")
        if not any(a.startswith(("-march=", "-mcpu=", "-mtune=")) for a in args):
            cmd.append("-march=native")  # kernels run on this machine: use its vector unit (F16C, AVX, NEON)
        if mode is not None:
            cmd.append(f"-DASCENDC_OC_CHECK={mode}")
        extra = "@OC_EXTRA_FLAGS@"
        if not extra.startswith("@"):
            cmd += extra.split()  # this build's sanitizer flags, so kernels match the libraries
        cmd += ["-I", gen_inc, "-I", os.path.join(inc, "ascendc"), "-I", inc] + new_args
        if not compile_only:
            cmd += ["-L", lib, "-lascendc", "-lascendcl", f"-Wl,-rpath,{lib}", "-pthread"]
        return subprocess.call(cmd)
    except SyntaxProblem as e:
        print(f"ascendc++: error: {e}", file=sys.stderr)
        return 1
    finally:
        subprocess.call(["rm", "-rf", tmp])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
