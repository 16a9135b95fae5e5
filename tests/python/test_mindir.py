"""MINDIR both ways against the real MindSpore wheel (the tests are in ms_mindir_suite.py)."""
import ms_harness

if ms_harness.needs_child():
    test_mindir = ms_harness.preloaded_test("ms_mindir_suite.py")
else:
    from ms_mindir_suite import *  # noqa: F401,F403
