"""The offline LLM API (liboc_llm.so through python/oc_llm; the tests are in
llm_offline_cases.py). On a sanitizer build the instrumented library needs
the sanitizer runtime loaded first, so the cases run in a child interpreter
that preloads it, as the mindspore suites do."""
import ms_harness

if ms_harness.needs_child():
    test_llm_offline = ms_harness.preloaded_test("llm_offline_cases.py")
else:
    from llm_offline_cases import *  # noqa: F401,F403
