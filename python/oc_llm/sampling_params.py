"""SamplingParams: vLLM's names and defaults, sent as the fields of an OpenAI request.

The checks are the server's (src/llm/server/openai_request.cc): a bad value is
refused when the request runs, with a ValueError naming the field."""
import dataclasses
from typing import Dict, List, Optional, Union


@dataclasses.dataclass
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    seed: Optional[int] = None
    stop: Optional[Union[str, List[str]]] = None
    stop_token_ids: Optional[List[int]] = None
    ignore_eos: bool = False
    max_tokens: Optional[int] = 16
    min_tokens: int = 0
    logprobs: Optional[int] = None
    include_stop_str_in_output: bool = False
    skip_special_tokens: bool = True
    logit_bias: Optional[Dict[int, float]] = None

    def request_fields(self, chat=False):
        """The OpenAI request fields of these parameters (chat: its logprobs shape)."""
        f = {"n": self.n, "temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k,
             "min_p": self.min_p, "presence_penalty": self.presence_penalty,
             "frequency_penalty": self.frequency_penalty, "repetition_penalty": self.repetition_penalty,
             "ignore_eos": self.ignore_eos, "min_tokens": self.min_tokens,
             "include_stop_str_in_output": self.include_stop_str_in_output,
             "skip_special_tokens": self.skip_special_tokens}
        if self.max_tokens is not None:
            f["max_tokens"] = self.max_tokens
        if self.seed is not None:
            f["seed"] = self.seed
        if self.stop is not None:
            f["stop"] = self.stop
        if self.stop_token_ids is not None:
            f["stop_token_ids"] = list(self.stop_token_ids)
        if self.logit_bias is not None:
            f["logit_bias"] = {str(k): v for k, v in self.logit_bias.items()}
        if self.logprobs is not None:
            if chat:
                f["logprobs"] = True
                f["top_logprobs"] = self.logprobs
            else:
                f["logprobs"] = self.logprobs
        return f
