"""The mindspore package end to end (the cases are in ms_api_cases.py)."""
import ms_harness

if ms_harness.needs_child():
    test_mindspore_api = ms_harness.preloaded_test("ms_api_cases.py")
else:
    from ms_api_cases import *  # noqa: F401,F403
