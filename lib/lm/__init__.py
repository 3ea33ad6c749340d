"""The language-model layer shared by EditLord, SWE-Gym and JETTS.

    tokenizer.py   byte-level BPE with chat/tool special tokens
    chat.py        chat template, tool-call text forms (local and `<function=...>` fallback)
    model.py       decoder-only transformer (Flax Linen, KV cache, LoRA)
    sampling.py    greedy / temperature / top-p / n / stops; log-probs of continuations
    sft.py         chat-JSONL fine-tuning with prompt masking and LoRA (a train_loop Task)
    client.py      `LanguageModel` interface + OpenAI-compatible client (retries, cache, ...)
    local.py       `LocalLM`: a workspace checkpoint behind the same interface
    server.py      OpenAI-compatible HTTP server (tools/serve_lm.py)
    minilm.py      all-MiniLM-L6-v2 sentence embeddings in Flax
    tasks.py       synthetic step-by-step addition
"""
