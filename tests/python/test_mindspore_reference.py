"""Our mindspore package against the real MindSpore wheel (the tests are in ms_reference_suite.py)."""
import ms_harness

if ms_harness.needs_child():
    test_mindspore_reference = ms_harness.preloaded_test("ms_reference_suite.py")
else:
    from ms_reference_suite import *  # noqa: F401,F403
