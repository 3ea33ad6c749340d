"""The outcome verifier: a trajectory in, p(YES) out (SWE-Gym §4.1.1, App. B.5).

The trajectory is serialised as text (the workspace LM's compact conversation: the issue
prompt, each action and its observation; or the full agent conversation with tool calls
rendered in the `<function=...>` form), put in a user turn after a system prompt that asks
whether the agent resolved the issue, and the model answers YES or NO. Training
(`training_conversations`) uses balanced data: positives capped at `cap_positive` per
instance, negatives subsampled to the same number. Scoring:

    p(YES) = exp(l_YES) / (exp(l_YES) + exp(l_NO))

with l_X the log-probability of the answer X as the assistant's reply -- for a
`LocalLM` the exact sum of token log-probs (`LocalLM.score`; a prompt longer than its
context loses the middle of the trajectory, `fit_to_context`), for a served model the
first-token `top_logprobs` (`client.option_probabilities`).
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np

from lib.lm import chat, client
from lib.swe_gym import rft

SYSTEM = ("Judge whether the agent resolved the issue. Answer only YES or NO.")


def serialise(record: dict, view: str = "lm_messages", max_chars: int = 4000) -> str:
    """The trajectory as text (module docstring), at most `max_chars` (head kept); the
    full agent conversation when the compact LM view is asked for but absent."""
    t = record["trajectory"]
    msgs = (t["extra"].get("lm_messages") if view == "lm_messages" else None) or t["messages"]
    parts = []
    for m in msgs:
        if m["role"] == "system":
            continue
        body = m.get("content") or ""
        for c in m.get("tool_calls") or []:
            args = json.loads(c["function"].get("arguments") or "{}")
            body += "\n" + chat.text_tool_call(c["function"]["name"], args)
        parts.append(f"[{m['role']}] {body}")
    text = "\n".join(parts)
    return text[:max_chars]


def prompt_messages(record: dict, view: str = "lm_messages", max_chars: int = 4000) -> list[dict]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": serialise(record, view, max_chars)}]


def training_conversations(records: Sequence[dict], *, cap_positive: int = 2, seed: int = 0,
                           view: str = "lm_messages", max_chars: int = 4000) -> list[list[dict]]:
    """Balanced YES/NO conversations (module docstring); ValueError when one class is empty."""
    pos = rft.select(records, cap_positive)
    neg = [r for r in records if not r["resolved"]]
    if not pos or not neg:
        raise ValueError(f"verifier data needs both classes: {len(pos)} resolved, "
                         f"{len(neg)} unresolved trajectories")
    rng = np.random.default_rng(seed)
    n = min(len(pos), len(neg))
    pos = [pos[i] for i in sorted(rng.choice(len(pos), n, replace=False))]
    neg = [neg[i] for i in sorted(rng.choice(len(neg), n, replace=False))]
    out = []
    for r, answer in [(r, "YES") for r in pos] + [(r, "NO") for r in neg]:
        out.append(prompt_messages(r, view, max_chars) + [{"role": "assistant", "content": answer}])
    order = rng.permutation(len(out))
    return [out[i] for i in order]


def fit_to_context(lm, messages: Sequence[dict], reserve: int = 8) -> list[dict]:
    """`messages` with the middle of the last (user) turn cut, 10 % at a time, until the
    prompt fits the local model's context less `reserve` tokens (the head -- the issue --
    and the tail -- the last actions and observations -- are kept)."""
    msgs = [dict(m) for m in messages]
    limit = lm.cfg.max_len - reserve
    text = msgs[-1]["content"]
    while lm.count_tokens(chat.render_chat(msgs)) > limit:
        if len(text) < 40:
            raise ValueError(f"the verifier prompt cannot fit the context of {lm.cfg.max_len}")
        head, cut = len(text) // 4, max(len(text) // 10, 1)
        text = text[:head] + "\n[...]\n" + text[head + cut:].split("\n", 1)[-1]
        msgs[-1]["content"] = text
    return msgs


def p_yes(lm, messages: Sequence[dict]) -> float:
    """p(YES) of the reply to `messages` (module docstring)."""
    if hasattr(lm, "score") and hasattr(lm, "tok"):
        prompt = chat.render_chat(fit_to_context(lm, messages))
        ly = float(np.sum(lm.score(prompt, "YES")))
        ln = float(np.sum(lm.score(prompt, "NO")))
        m = max(ly, ln)
        return math.exp(ly - m) / (math.exp(ly - m) + math.exp(ln - m))
    r = lm.chat(list(messages), temperature=0.0, max_tokens=1, logprobs=True, top_logprobs=5)
    probs = client.option_probabilities(r.choices[0], ["YES", "NO"])
    return probs["YES"]


def score_records(lm, records: Sequence[dict], view: str = "lm_messages",
                  max_chars: int = 4000) -> list[float]:
    return [p_yes(lm, prompt_messages(r, view, max_chars)) for r in records]


def accuracy(scores: Sequence[float], labels: Sequence[bool]) -> dict:
    """Accuracy at 0.5 and the ROC AUC (ties count one half) of p(YES) against labels."""
    s, y = np.asarray(scores, float), np.asarray(labels, bool)
    acc = float(((s >= 0.5) == y).mean()) if len(s) else float("nan")
    if y.all() or not y.any():
        return {"accuracy": acc, "auc": float("nan")}
    pos, neg = s[y], s[~y]
    auc = float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum())
                / (len(pos) * len(neg)))
    return {"accuracy": acc, "auc": auc}
