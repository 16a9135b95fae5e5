"""Trains the demo model: a small Llama (transformers' LlamaForCausalLM) on the
docstrings of the Python standard library (corpus.py), with a byte-level BPE
tokenizer of 2048 tokens trained on the same text (Hugging Face tokenizers).

    python3 models/llm-demo/train.py [--out models/llm-demo] [--steps 450] [--threads 1]

Writes config.json, generation_config.json, model.safetensors (float16),
tokenizer.json, tokenizer_config.json (bos/eos and a chat template) and
train_log.json (losses, timings) into --out. Seeds are fixed and the data
order is deterministic; on the same Python, torch and thread count the run
repeats (README.md).
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

SEED = 20261204
VOCAB = 2048
CONTEXT = 256
BOS, EOS = "<s>", "</s>"
BF16 = True  # matmuls in bfloat16 under autocast (weights and optimizer state float32): ~1.2x on this CPU
ROLES = ("system", "user", "assistant")
ROLE_TOKENS = [f"<|{r}|>" for r in ROLES]
# Rendered by transformers' apply_chat_template and by the project's template
# engine (src/llm/chat): bos, then each message as <|role|>\ncontent</s>\n.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['role'] not in ['system', 'user', 'assistant'] %}"
    "{{ raise_exception('roles are system, user and assistant, not ' + message['role']) }}"
    "{% endif %}"
    "{{ '<|' + message['role'] + '|>\\n' + message['content'] | trim + eos_token + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}")


def chat_text(messages, add_generation_prompt):
    """CHAT_TEMPLATE written out in Python (the training text of the chat examples)."""
    s = BOS + "".join(f"<|{m['role']}|>\n{m['content'].strip()}{EOS}\n" for m in messages)
    return s + ("<|assistant|>\n" if add_generation_prompt else "")


def chat_example(qual, doc):
    return chat_text([{"role": "user", "content": f"What does {qual} do?"},
                      {"role": "assistant", "content": doc}], False)


def train_tokenizer(texts):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=2, special_tokens=[BOS, EOS] + ROLE_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer, length=len(texts))
    bos = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", special_tokens=[(BOS, bos)])
    return tok


def windows(ids, n):
    """Non-overlapping windows of n+1 tokens (inputs and shifted targets)."""
    count = (len(ids) - 1) // n
    return torch.stack([ids[i * n:i * n + n + 1] for i in range(count)])


def loss_of(model, chunk):
    """Mean next-token cross entropy over a batch of windows of CONTEXT+1 tokens."""
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=BF16):
        logits = model(input_ids=chunk[:, :-1]).logits
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), chunk[:, 1:].reshape(-1))


@torch.no_grad()
def evaluate(model, data, batch):
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(data), batch):
        chunk = data[i:i + batch]
        total += loss_of(model, chunk).item() * chunk.shape[0]
        count += chunk.shape[0]
    model.train()
    return total / count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--steps", type=int, default=450)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (1: on this shared 2-core host one thread trained faster than two)")
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--max-minutes", type=float, default=12.0,
                    help="stop training early (and say so in train_log.json) past this wall time")
    ap.add_argument("--no-bf16", action="store_true", help="train in float32 throughout")
    args = ap.parse_args()
    global BF16
    BF16 = not args.no_bf16

    torch.set_num_threads(args.threads)
    torch.manual_seed(SEED)
    random.seed(SEED)
    t0 = time.time()

    docs = corpus.load()
    train_docs = [(q, d) for q, d in docs if not corpus.is_validation(d)]
    val_docs = [(q, d) for q, d in docs if corpus.is_validation(d)]
    # A quarter of the training documents also appear as a chat turn
    # ("What does json.dumps do?" -> its docstring), so that the chat template
    # has meaning to the model.
    chat_docs = [chat_example(q, d) for i, (q, d) in enumerate(train_docs) if i % 4 == 0]
    plain = [d for _, d in train_docs]
    order = plain + chat_docs
    random.Random(SEED).shuffle(order)

    tok = train_tokenizer(plain)
    t_tok = time.time() - t0
    # Plain texts get <s> from the post-processor; the chat examples have it in
    # their text, so they are encoded without the post-processor's.
    def encode_all(texts):
        eos = tok.token_to_id(EOS)
        ids = []
        for t in texts:
            e = tok.encode(t, add_special_tokens=not t.startswith(BOS)).ids
            ids.extend(e + ([eos] if e[-1] != eos else []))
        return torch.tensor(ids, dtype=torch.long)
    train_ids = encode_all(order)
    val_ids = encode_all([d for _, d in val_docs])
    train_w, val_w = windows(train_ids, CONTEXT), windows(val_ids, CONTEXT)
    print(f"corpus: {len(docs)} docstrings ({sum(len(d) for _, d in docs)} chars), {len(chat_docs)} chat examples; "
          f"train {len(train_ids)} tokens ({len(train_w)} windows), val {len(val_ids)} tokens ({len(val_w)} windows); "
          f"tokenizer {t_tok:.1f} s", flush=True)

    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                      num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=CONTEXT,
                      rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=True, hidden_act="silu",
                      bos_token_id=tok.token_to_id(BOS), eos_token_id=tok.token_to_id(EOS),
                      pad_token_id=tok.token_to_id(EOS), initializer_range=0.02)
    model = LlamaForCausalLM(cfg)
    params = sum(p.numel() for p in model.parameters())
    print(f"model: {params} parameters", flush=True)

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    warmup = max(1, args.steps // 20)

    def lr_at(step):
        if step < warmup:
            return args.lr * (step + 1) / warmup
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / (args.steps - warmup))))

    gen = torch.Generator().manual_seed(SEED)
    perm, pos = torch.randperm(len(train_w), generator=gen), 0
    log = {"evals": []}
    t_train = time.time()
    model.train()
    running = None
    stopped_at = None
    for step in range(args.steps):
        if time.time() - t0 > args.max_minutes * 60:
            stopped_at = step
            print(f"stopped early at step {step}: past --max-minutes {args.max_minutes}", flush=True)
            break
        if pos + args.batch > len(perm):
            perm, pos = torch.randperm(len(train_w), generator=gen), 0
        batch = train_w[perm[pos:pos + args.batch]]
        pos += args.batch
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        loss = loss_of(model, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            val = evaluate(model, val_w, 32)
            el = time.time() - t_train
            log["evals"].append({"step": step + 1, "train_loss_ema": round(running, 4), "val_loss": round(val, 4),
                                 "seconds": round(el, 1)})
            print(f"step {step + 1}/{args.steps}: train {running:.3f} val {val:.3f} "
                  f"({el:.0f} s, {(step + 1) * args.batch * CONTEXT / el:.0f} tokens/s)", flush=True)
    train_seconds = time.time() - t_train
    # Final losses over whole sets (not a running average) with the trained weights.
    train_eval = evaluate(model, train_w[torch.randperm(len(train_w), generator=gen)[:len(val_w)]], 32)
    val_eval = evaluate(model, val_w, 32)

    os.makedirs(args.out, exist_ok=True)
    model.generation_config.do_sample = False
    model.generation_config.max_new_tokens = 64
    model.to(torch.float16).save_pretrained(args.out, safe_serialization=True)
    tok.save(os.path.join(args.out, "tokenizer.json"))
    tcfg = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": BOS, "eos_token": EOS, "pad_token": EOS,
            "add_bos_token": True, "add_eos_token": False, "model_max_length": CONTEXT,
            "clean_up_tokenization_spaces": False, "chat_template": CHAT_TEMPLATE}
    with open(os.path.join(args.out, "tokenizer_config.json"), "w") as f:
        json.dump(tcfg, f, indent=2)
        f.write("\n")

    # The chat template as transformers renders it equals the training text's form.
    from transformers import AutoTokenizer
    hf = AutoTokenizer.from_pretrained(args.out)
    msgs = [{"role": "system", "content": "Answer from the docs."}, {"role": "user", "content": "What does len do?"}]
    assert hf.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True) == chat_text(msgs, True)

    log.update({"parameters": params, "steps": args.steps, "batch": args.batch, "context": CONTEXT, "lr": args.lr,
                "threads": args.threads, "bf16_autocast": BF16, "train_tokens": len(train_ids), "val_tokens": len(val_ids),
                "docstrings": len(docs), "chat_examples": len(chat_docs),
                "tokens_seen": (stopped_at or args.steps) * args.batch * CONTEXT,
                "stopped_early_at_step": stopped_at, "train_loss": round(train_eval, 4),
                "val_loss": round(val_eval, 4), "train_seconds": round(train_seconds, 1),
                "total_seconds": round(time.time() - t0, 1), "python": sys.version.split()[0],
                "torch": torch.__version__, "transformers": __import__("transformers").__version__,
                "tokenizers": __import__("tokenizers").__version__})
    with open(os.path.join(args.out, "train_log.json"), "w") as f:
        json.dump(log, f, indent=2)
        f.write("\n")
    print(f"done: train loss {train_eval:.3f}, val loss {val_eval:.3f}, {train_seconds:.0f} s training, "
          f"{time.time() - t0:.0f} s in all", flush=True)


if __name__ == "__main__":
    main()
