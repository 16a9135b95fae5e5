"""The mindspore package against PyTorch (the cases are in ms_torch_cases.py)."""
import ms_harness

if ms_harness.needs_child():
    test_mindspore_torch = ms_harness.preloaded_test("ms_torch_cases.py")
else:
    from ms_torch_cases import *  # noqa: F401,F403
