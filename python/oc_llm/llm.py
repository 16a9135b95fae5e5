"""LLM: vLLM's offline API over liboc_llm.so (docs/llm.md, "Offline API").

Every call is one or more OpenAI requests run by the C library exactly as
oc-llm-server runs them (the same parsing, checks, sampling, stop strings and
replies), with the offline extension "return_token_ids". Requests run from a
thread each, so all prompts of a call share the engine's continuous batch."""
import concurrent.futures
import ctypes
import json
import os
import threading

from . import _lib
from .outputs import CompletionOutput, Logprob, RequestOutput
from .sampling_params import SamplingParams

MAX_PROMPTS_PER_REQUEST = 256  # the server's limit for one /v1/completions request


class OcLlmError(Exception):
    """An error reply: `status` (the server's HTTP status), `param` (the field at fault), `code`."""

    def __init__(self, message, status, param=None, code=None):
        super().__init__(message)
        self.status, self.param, self.code = status, param, code


class BadRequestError(OcLlmError, ValueError):
    """400 / 404: the request (or the engine arguments) are wrong; the message names the field."""


class EngineError(OcLlmError, RuntimeError):
    """429 / 500 / 503: the engine could not serve the request."""


def _error(rc, body):
    err = {}
    if body:
        try:
            err = json.loads(body).get("error", {}) or {}
        except ValueError:
            err = {}
    message = err.get("message") or _lib.last_error() or f"liboc_llm.so returned {rc}"
    cls = BadRequestError if rc in (400, 404) else EngineError
    return cls(message, rc, err.get("param"), err.get("code"))


class LLM:
    """LLM(model, **engine_args): loads the model folder `model` (config.json, *.safetensors,
    tokenizer.json, tokenizer_config.json). engine_args are oc-llm-server's flags with underscores:
    served_model_name, max_model_len, max_num_seqs, max_num_batched_tokens, block_size,
    kv_cache_memory_bytes (int or "512MiB"), max_waiting_requests, threads, tensor_parallel_size (1),
    dtype ("auto", "float32", "bfloat16", "int8", "int4"), group_size. Any other name is refused
    (ValueError naming it)."""

    def __init__(self, model, **engine_args):
        tok = engine_args.pop("tokenizer", None)
        if tok is not None and os.fspath(tok) != os.fspath(model):
            raise BadRequestError("tokenizer: a tokenizer other than the model folder's is not supported", 400,
                                  "tokenizer", "not_supported")
        config = {"model": os.fspath(model)}
        config.update({k: v for k, v in engine_args.items() if v is not None})
        handle = ctypes.c_void_p()
        rc = _lib.lib.oc_llm_open(json.dumps(config).encode(), ctypes.byref(handle))
        if rc != 0:
            raise _error(rc, None)
        self._handle = handle
        self._lock = threading.Condition()
        self._in_flight = 0
        self._next_id = 0
        self._token_text = {}
        models = self._call(_lib.lib.oc_llm_models)
        self.served_model_name = json.loads(models)["data"][0]["id"]
        self.max_model_len = json.loads(models)["data"][0]["max_model_len"]

    # ---- the C calls --------------------------------------------------------------------------

    def _call(self, fn, *args):
        """fn(handle, *args, &out) -> the text it returned; an error reply raised."""
        with self._lock:
            if self._handle is None:
                raise EngineError("the LLM is closed", 503)
            self._in_flight += 1
            handle = self._handle
        try:
            out = ctypes.c_void_p()
            rc = fn(handle, *args, ctypes.byref(out))  # ctypes releases the GIL meanwhile
            text = _lib.take_string(out.value)
            if rc != 0:
                raise _error(rc, text)
            return text
        finally:
            with self._lock:
                self._in_flight -= 1
                self._lock.notify_all()

    def _request(self, fn, body):
        return json.loads(self._call(fn, json.dumps(body).encode()))

    def completions(self, request):
        """POST /v1/completions without HTTP: the request dict in, the reply dict out (not streaming)."""
        return self._request(_lib.lib.oc_llm_completions, request)

    def chat_completions(self, request):
        """POST /v1/chat/completions without HTTP."""
        return self._request(_lib.lib.oc_llm_chat_completions, request)

    def tokenize(self, request):
        """POST /tokenize: {"prompt"} or {"messages"} -> {"count", "max_model_len", "tokens"}."""
        return self._request(_lib.lib.oc_llm_tokenize, request)

    def detokenize(self, request):
        """POST /detokenize: {"tokens"} -> {"prompt"}."""
        return self._request(_lib.lib.oc_llm_detokenize, request)

    def metrics(self):
        """GET /metrics: Prometheus text with vLLM's metric names."""
        return self._call(_lib.lib.oc_llm_metrics)

    def close(self):
        """Stops the engine (after the calls running in other threads)."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            while self._in_flight:
                lock.wait()
            handle, self._handle = self._handle, None
        if handle:
            _lib.lib.oc_llm_close(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ---- vLLM's offline API ----------------------------------------------------------------------

    def get_tokenizer(self):
        return Tokenizer(self)

    def generate(self, prompts, sampling_params=None, use_tqdm=False):
        """prompts: a str, a {"prompt": str} or {"prompt_token_ids": [...]} dict, or a list of these.
        sampling_params: one SamplingParams for all, or a list with one per prompt.
        Returns one RequestOutput per prompt, in prompt order."""
        items = [self._prompt(p) for p in (prompts if isinstance(prompts, (list, tuple)) else [prompts])]
        if not items:
            return []
        params = self._params(sampling_params, len(items), "prompts")
        for p in params:
            if p.max_tokens is None:
                raise BadRequestError("max_tokens=None is not supported by generate (give a number of tokens)", 400,
                                      "max_tokens")
        groups = {}  # prompts with the same kind and parameters share requests
        for i, (kind, value) in enumerate(items):
            fields = params[i].request_fields()
            groups.setdefault((kind, json.dumps(fields, sort_keys=True)), (fields, []))[1].append(i)
        jobs = []
        for (kind, _), (fields, idx) in groups.items():
            for at in range(0, len(idx), MAX_PROMPTS_PER_REQUEST):
                part = idx[at:at + MAX_PROMPTS_PER_REQUEST]
                body = dict(fields, prompt=[items[i][1] for i in part], return_token_ids=True)
                jobs.append((part, body, fields["n"]))
        replies = self._run_all([(_lib.lib.oc_llm_completions, body) for _, body, _ in jobs])
        results = [None] * len(items)
        for (part, _, n), reply in zip(jobs, replies):
            choices = sorted(reply["choices"], key=lambda c: c["index"])
            for k, i in enumerate(part):
                mine = choices[k * n:(k + 1) * n]
                prompt = items[i][1] if items[i][0] == "text" else None
                results[i] = RequestOutput(self._request_id(), prompt, mine[0]["prompt_token_ids"],
                                           [self._output(j, c, c["text"]) for j, c in enumerate(mine)])
        return results

    def chat(self, messages, sampling_params=None, use_tqdm=False, chat_template=None, add_generation_prompt=True,
             continue_final_message=False, chat_template_kwargs=None):
        """messages: one conversation (a list of {"role", "content"}) or a list of conversations.
        Each is rendered with the model's chat template (or `chat_template`). One RequestOutput each."""
        convs = messages if messages and isinstance(messages[0], (list, tuple)) else [messages]
        if not convs:
            return []
        params = self._params(sampling_params, len(convs), "conversations")
        bodies = []
        for conv, p in zip(convs, params):
            body = dict(p.request_fields(chat=True), messages=list(conv), return_token_ids=True,
                        add_generation_prompt=add_generation_prompt, continue_final_message=continue_final_message)
            if chat_template is not None:
                body["chat_template"] = chat_template
            if chat_template_kwargs is not None:
                body["chat_template_kwargs"] = chat_template_kwargs
            bodies.append((_lib.lib.oc_llm_chat_completions, body))
        results = []
        for reply in self._run_all(bodies):
            ids = reply["prompt_token_ids"]
            prompt = self.detokenize({"tokens": ids})["prompt"]
            choices = sorted(reply["choices"], key=lambda c: c["index"])
            results.append(RequestOutput(self._request_id(), prompt, ids,
                                         [self._output(j, c, c["message"]["content"]) for j, c in enumerate(choices)]))
        return results

    # ---- helpers -----------------------------------------------------------------------------------

    def _run_all(self, calls):
        """Runs (fn, body) requests at once (a thread each, all in the engine's batch); replies in order.
        The first error (in order) is raised after all have ended."""
        if len(calls) == 1:
            return [self._request(*calls[0])]
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(calls), 256)) as ex:
            futures = [ex.submit(self._request, fn, body) for fn, body in calls]
            concurrent.futures.wait(futures)
        return [f.result() for f in futures]

    @staticmethod
    def _prompt(p):
        if isinstance(p, str):
            return ("text", p)
        if isinstance(p, dict):
            if "prompt_token_ids" in p:
                ids = p["prompt_token_ids"]
                if not isinstance(ids, (list, tuple)) or not all(isinstance(t, int) and not isinstance(t, bool)
                                                                 for t in ids):
                    raise BadRequestError(f"prompt_token_ids must be a list of token ids, got {ids!r:.60}", 400,
                                          "prompt")
                return ("ids", list(ids))
            if isinstance(p.get("prompt"), str):
                return ("text", p["prompt"])
        raise BadRequestError("a prompt must be a str, {\"prompt\": str} or {\"prompt_token_ids\": [ids]}, got "
                              f"{p!r:.60}", 400, "prompt")

    @staticmethod
    def _params(sampling_params, count, what):
        if sampling_params is None:
            return [SamplingParams()] * count
        if isinstance(sampling_params, SamplingParams):
            return [sampling_params] * count
        params = list(sampling_params)
        if len(params) != count or not all(isinstance(p, SamplingParams) for p in params):
            raise BadRequestError(f"sampling_params must be one SamplingParams or a list of {count} (one per item "
                                  f"of {what}), got {len(params)} items", 400, "sampling_params")
        return params

    def _request_id(self):
        with self._lock:
            rid, self._next_id = self._next_id, self._next_id + 1
        return str(rid)

    def token_text(self, token_id):
        """The text of one token id (as the server's logprobs show it)."""
        if token_id not in self._token_text:
            self._token_text[token_id] = self.detokenize({"tokens": [token_id]})["prompt"]
        return self._token_text[token_id]

    def _output(self, index, choice, text):
        logprobs, cumulative = None, None
        if choice.get("token_id_logprobs") is not None:
            logprobs, cumulative = [], 0.0
            for lp in choice["token_id_logprobs"]:
                d = {}
                for rank, (tid, value) in enumerate(lp["top"], 1):
                    d.setdefault(tid, Logprob(value, rank, self.token_text(tid)))
                if lp["token_id"] not in d:
                    d[lp["token_id"]] = Logprob(lp["logprob"], None, self.token_text(lp["token_id"]))
                logprobs.append(d)
                cumulative += lp["logprob"]
        return CompletionOutput(index, text, list(choice["token_ids"]), cumulative, logprobs,
                                choice.get("finish_reason"), choice.get("stop_reason"))


class Tokenizer:
    """LLM.get_tokenizer(): the model's tokenizer through /tokenize and /detokenize."""

    def __init__(self, llm):
        self._llm = llm

    def encode(self, text, add_special_tokens=True):
        return self._llm.tokenize({"prompt": text, "add_special_tokens": add_special_tokens})["tokens"]

    def decode(self, token_ids, skip_special_tokens=False):
        if skip_special_tokens:
            raise BadRequestError("decode(skip_special_tokens=True) is not supported (/detokenize keeps special "
                                  "tokens)", 400, "skip_special_tokens", "not_supported")
        return self._llm.detokenize({"tokens": list(token_ids)})["prompt"]

    def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=True, chat_template=None,
                            continue_final_message=False, **chat_template_kwargs):
        """The ids of the rendered conversation (tokenize=True only)."""
        if not tokenize:
            raise BadRequestError("apply_chat_template(tokenize=False) is not supported (the text is not returned; "
                                  "decode the ids)", 400, "tokenize", "not_supported")
        body = {"messages": list(messages), "add_generation_prompt": add_generation_prompt,
                "continue_final_message": continue_final_message}
        if chat_template is not None:
            body["chat_template"] = chat_template
        if chat_template_kwargs:
            body["chat_template_kwargs"] = chat_template_kwargs
        return self._llm.tokenize(body)["tokens"]
