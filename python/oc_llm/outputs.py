"""The results of LLM.generate / LLM.chat, in vLLM's shapes."""
import dataclasses
from typing import Dict, List, Optional, Union


@dataclasses.dataclass
class Logprob:
    logprob: float
    rank: Optional[int] = None        # 1 = the most likely; None: outside the top k asked for
    decoded_token: Optional[str] = None


@dataclasses.dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: List[int]
    cumulative_logprob: Optional[float]  # the sum of the chosen tokens' logprobs, when logprobs were asked
    logprobs: Optional[List[Dict[int, Logprob]]]  # per token: the chosen one and the top k
    finish_reason: Optional[str] = None  # "stop", "length", "abort"
    stop_reason: Union[int, str, None] = None  # the stop string or stop token id that ended it

    def finished(self):
        return self.finish_reason is not None


@dataclasses.dataclass
class RequestOutput:
    request_id: str
    prompt: Optional[str]
    prompt_token_ids: List[int]
    outputs: List[CompletionOutput]
    finished: bool = True
