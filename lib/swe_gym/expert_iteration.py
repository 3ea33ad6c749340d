"""Expert iteration for the workspace LM: batched sampling, warm-start data, paired tests.

SWE-Gym §3 fine-tunes on resolved trajectories (rejection sampling); with a weak policy
almost every rollout fails, so many rollouts per instance are needed, repeated over rounds
(sample -> grade -> keep resolved -> fine-tune -> sample with the new model). Pieces:

* `PooledLM(lm, n)`: the LM seen by every rollout of one instance. The first request for
  a prompt draws `n` samples in ONE batched generation (`LocalLM.chat(n=n)`, vmapped rows
  sharing the prompt, with the KV cache) and hands them out one per request; a pool
  that runs dry is refilled. Rollouts of the same instance share the scripted
  localisation, so their first prompt (and often their later ones) coincide. Samples
  drawn i.i.d. at temperature T from the same prompt are exchangeable, so handing a
  rollout the next pooled sample is distributed exactly like calling the LM for it.
* `search_demonstrations(records, max_edits)`: the warm start. The search baseline's
  resolved trajectories on the TRAINING repositories, rewritten in the workspace LM's
  compact format (its prompt, `fix(line, op)` for each kept edit, the `REPRO k/n`
  observation it got, `finish()`). Kept only when every edit is one of the LM's ops at a
  line the prompt shows (with the line number meaning the same file). This is the
  paper's setting of fine-tuning on successful agent trajectories of a stronger agent.
* `mcnemar_p(before, after)`: exact one-sided McNemar (sign) test of paired per-instance
  outcomes (H1: `after` resolves more), on `lib.toolbox.stats.sign_test_p`.
"""
from __future__ import annotations

from collections.abc import Sequence

from lib.toolbox import stats
from lib.lm import chat
from lib.lm.client import ChatResult
from lib.swe_gym import policies


class PooledLM:
    """A batched-sampling view of `lm` (module docstring); `draws` counts generations."""

    def __init__(self, lm, n: int, seed: int = 0):
        if n < 1:
            raise ValueError(f"pool size n = {n} must be >= 1")
        self.lm, self.n, self.seed = lm, n, seed
        self.cfg = getattr(lm, "cfg", None)
        self.name = getattr(lm, "name", "pooled")
        self._pools: dict[tuple, list] = {}
        self.draws = self.requests = 0

    def count_tokens(self, text: str) -> int:
        return self.lm.count_tokens(text)

    def chat(self, messages: Sequence[dict], *, temperature: float = 1.0, top_p: float = 1.0,
             max_tokens: int = 256, seed: int | None = None, **kw) -> ChatResult:
        if kw:
            raise ValueError(f"PooledLM.chat does not support {sorted(kw)}")
        self.requests += 1
        key = (chat.render_chat(messages), float(temperature), float(top_p), int(max_tokens))
        pool = self._pools.get(key)
        if not pool:
            r = self.lm.chat(list(messages), n=self.n, temperature=temperature, top_p=top_p,
                             max_tokens=max_tokens, seed=self.seed * 1_000_003 + self.draws)
            self.draws += 1
            pool = self._pools[key] = list(r.choices)
        choice = pool.pop(0)
        return ChatResult([choice], self.name)


def search_demonstration(record: dict, max_edits: int) -> list[dict] | None:
    """The compact conversation of one resolved search-baseline record (module docstring),
    or None when it cannot be expressed in the LM's action vocabulary."""
    if not record["resolved"]:
        return None
    extra = record["trajectory"].get("extra") or {}
    prompt, edits = extra.get("prompt"), extra.get("edits") or []
    if not prompt or not edits or len(edits) > max_edits:
        return None
    shown = {int(ln.split("|", 1)[0]) for ln in prompt.splitlines()[1:]
             if ln.split("|", 1)[0].isdigit()}
    for e in edits:
        if e.get("op") is None or not e.get("first_path") or e["line"] not in shown:
            return None
    return policies.demonstration(prompt, edits)


def search_demonstrations(records: Sequence[dict], max_edits: int) -> list[list[dict]]:
    out = [search_demonstration(r, max_edits) for r in records]
    return [c for c in out if c is not None]


def mcnemar_p(before: Sequence[bool], after: Sequence[bool]) -> dict:
    """Exact one-sided McNemar test on paired outcomes: {wins, losses, p}; p = P(X >= wins)
    for X ~ Binomial(wins + losses, 1/2) (1.0 when there are no discordant pairs)."""
    if len(before) != len(after):
        raise ValueError(f"paired outcomes differ in length: {len(before)} vs {len(after)}")
    wins = sum(bool(a) and not bool(b) for b, a in zip(before, after))
    losses = sum(bool(b) and not bool(a) for b, a in zip(before, after))
    return {"wins": wins, "losses": losses, "p": stats.sign_test_p(wins, losses)}


