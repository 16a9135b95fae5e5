"""`mindspore.set_context` / `get_context`: execution mode and device."""
GRAPH_MODE = 0
PYNATIVE_MODE = 1

_ctx = {"mode": PYNATIVE_MODE, "device_target": "CPU", "device_id": 0, "max_call_depth": 1000,
        "save_graphs": False, "pynative_synchronize": False, "runtime_num_threads": None, "jit_level": "O0"}
_IGNORED = {"save_graphs_path", "enable_graph_kernel", "graph_kernel_flags", "max_device_memory", "mempool_block_size",
            "enable_compile_cache", "compile_cache_path", "inter_op_parallel_num", "memory_optimize_level",
            "deterministic", "print_file_path", "env_config_path", "precompile_only", "enable_reduce_precision",
            "check_bprop", "jit_config", "debug_level", "op_timeout"}


def set_context(**kwargs):
    for k, v in kwargs.items():
        if k == "mode":
            if v not in (GRAPH_MODE, PYNATIVE_MODE):
                raise ValueError(f"set_context: mode must be GRAPH_MODE (0) or PYNATIVE_MODE (1), got {v!r}")
        elif k == "device_target":
            if v not in ("CPU", "Ascend", "GPU"):
                raise ValueError(f"set_context: device_target must be 'CPU', 'GPU' or 'Ascend', got {v!r}")
            if v != "CPU":
                raise NotImplementedError(f"set_context: device_target '{v}': this build runs on the CPU only")
        elif k == "runtime_num_threads":
            from . import _backend
            _backend.set_num_threads(int(v))
        elif k not in _ctx and k not in _IGNORED:
            raise ValueError(f"set_context: unknown argument '{k}'")
        _ctx[k] = v


def get_context(key):
    if key not in _ctx:
        raise ValueError(f"get_context: unknown key '{key}'")
    return _ctx[key]


def _graph_mode():
    return _ctx["mode"] == GRAPH_MODE
