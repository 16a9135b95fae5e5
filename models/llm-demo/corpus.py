"""The demo model's training text: the docstrings of the Python standard library.

Every module of sys.stdlib_module_names (and the submodules of its packages,
test suites and GUI/side-effect modules left out) is imported, and the
docstrings of the module, its classes, their methods and its functions are
collected with inspect.getdoc (indentation cleaned). Order is deterministic:
modules by name, members by name; each distinct text is kept once (the first
time it is met). The documents depend on the Python version (3.11 here).

Other packages can change what the standard modules hold (importing torch
replaces inspect.getfile, for one), so load() collects the documents in a
fresh interpreter (`python3 -I corpus.py --json`).

Run alone it prints counts: python3 models/llm-demo/corpus.py
"""
import contextlib
import importlib
import inspect
import io
import json
import os
import pkgutil
import subprocess
import sys
import warnings
import zlib

# Modules with side effects on import, GUI toolkits, test suites and private helpers.
SKIP_PREFIXES = ("antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "test", "lib2to3.tests",
                 "__main__", "__phello__", "_", "ensurepip", "pydoc_data", "msilib", "winreg", "winsound",
                 "msvcrt", "nt", "_winapi", "distutils.tests", "unittest.test", "ctypes.test", "sqlite3.test",
                 "tkinter.test", "multiprocessing.popen_spawn_win32", "asyncio.windows", "encodings.")
MIN_CHARS = 40  # shorter texts ("Return self==value.") teach little


def _skipped(name):
    for p in SKIP_PREFIXES:
        if name == p.rstrip(".") or name.startswith(p if p.endswith(".") or p == "_" else p + "."):
            return True
    return any(part.startswith("_") for part in name.split(".")[1:]) or ".test" in name


def module_names():
    names = set()
    for top in sorted(sys.stdlib_module_names):
        if _skipped(top):
            continue
        names.add(top)
        mod = _import(top)
        if mod is not None and hasattr(mod, "__path__"):
            for info in pkgutil.walk_packages(mod.__path__, top + ".", onerror=lambda _: None):
                if not _skipped(info.name):
                    names.add(info.name)
    return sorted(names)


def _import(name):
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            return importlib.import_module(name)
    except BaseException:  # noqa: BLE001 - platform-specific modules fail in many ways
        return None


def _doc(obj):
    try:
        d = inspect.getdoc(obj)
    except Exception:  # noqa: BLE001
        return None
    return d.strip() if isinstance(d, str) else None


def _members(obj):
    try:
        return sorted(vars(obj).items(), key=lambda kv: kv[0])
    except TypeError:
        return []


def docstrings():
    """All documents, in a fixed order: list of (qualified name, text)."""
    seen, out = set(), []

    def add(qual, obj):
        d = _doc(obj)
        if d and len(d) >= MIN_CHARS and d not in seen:
            seen.add(d)
            out.append((qual, d))

    for name in module_names():
        mod = _import(name)
        if mod is None:
            continue
        add(name, mod)
        for attr, obj in _members(mod):
            if attr.startswith("_") or getattr(obj, "__module__", None) != name:
                continue  # imported names are documented where they are defined
            if inspect.isclass(obj):
                add(f"{name}.{attr}", obj)
                for mattr, m in _members(obj):
                    if (not mattr.startswith("_") or mattr == "__init__") and \
                            (inspect.isroutine(m) or isinstance(m, (property, classmethod, staticmethod))):
                        add(f"{name}.{attr}.{mattr}", m.__func__ if isinstance(m, (classmethod, staticmethod)) else m)
            elif inspect.isroutine(obj):
                add(f"{name}.{attr}", obj)
    return out


def is_validation(text):
    """About 1 document in 20 is held out, chosen by a hash of its text."""
    return zlib.crc32(text.encode("utf-8")) % 20 == 0


def load():
    """docstrings() as collected by a fresh interpreter (-I: no user site, no PYTHONPATH)."""
    out = subprocess.run([sys.executable, "-I", os.path.abspath(__file__), "--json"], capture_output=True,
                         check=True, timeout=300).stdout
    return [tuple(x) for x in json.loads(out)]


if __name__ == "__main__":
    if sys.argv[1:] == ["--json"]:
        sys.stdout.write(json.dumps(docstrings(), ensure_ascii=True))
        sys.exit(0)
    docs = docstrings()
    chars = sum(len(d) for _, d in docs)
    val = sum(1 for _, d in docs if is_validation(d))
    print(f"{len(docs)} docstrings, {chars} characters, {val} held out; first: {docs[0][0]}, last: {docs[-1][0]}")
