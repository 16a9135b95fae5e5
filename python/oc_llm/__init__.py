"""oc_llm: OpenCANN's offline LLM API in Python, vLLM-shaped, over liboc_llm.so (ctypes).

    from oc_llm import LLM, SamplingParams
    llm = LLM("path/to/model", max_num_seqs=16)
    for out in llm.generate(["Hello", "The sky"], SamplingParams(temperature=0, max_tokens=8)):
        print(out.prompt, out.outputs[0].text, out.outputs[0].token_ids)
    llm.chat([{"role": "user", "content": "Hi"}], SamplingParams(max_tokens=32))

Requests are those of oc-llm-server (docs/llm.md, "Server" and "Offline API"):
LLM.completions / chat_completions / tokenize / detokenize take and return
the server's JSON as dicts. Bad requests raise BadRequestError (a ValueError)
naming the field; engine failures raise EngineError (a RuntimeError)."""
from .llm import LLM, BadRequestError, EngineError, OcLlmError, Tokenizer
from .outputs import CompletionOutput, Logprob, RequestOutput
from .sampling_params import SamplingParams

__all__ = ["LLM", "SamplingParams", "RequestOutput", "CompletionOutput", "Logprob", "Tokenizer", "OcLlmError",
           "BadRequestError", "EngineError"]
