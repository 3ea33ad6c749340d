"""Synthetic step-by-step multi-digit addition, as chat conversations for the small LM.

A problem (a, b) with a, b < 10^D is written with zero-padded operands (so column i sits
at a fixed offset) or, with `pad=False`, as plain numbers. The assistant works column by
column from the right, writing `x+y+c=CS` (CS = carry and sum digit, two characters), and
ends with `=` and the D + 1 answer digits (most significant first, zero-padded):

    user:      0347+0085
    assistant: 7+5+0=12 4+8+1=13 3+0+1=04 0+0+0=00 =00432

Exact match = the integer after the last `=` equals a + b. Held-out problems are a fixed
pseudo-random `test_fraction` of all pairs (by a CRC of "a+b"), so no training sample can
ever be a test problem whatever the seed.
"""
from __future__ import annotations

import re
import zlib
from typing import NamedTuple

import numpy as np


class Problem(NamedTuple):
    a: int
    b: int


def _fmt(x: int, digits: int, pad: bool) -> str:
    return str(x).zfill(digits) if pad else str(x)


def prompt_text(p: Problem, digits: int, pad: bool = True) -> str:
    return f"{_fmt(p.a, digits, pad)}+{_fmt(p.b, digits, pad)}"


def solution_text(p: Problem, digits: int) -> str:
    """The column-by-column working and the answer (module docstring)."""
    steps, carry = [], 0
    for i in range(digits):
        x, y = (p.a // 10 ** i) % 10, (p.b // 10 ** i) % 10
        s = x + y + carry
        steps.append(f"{x}+{y}+{carry}={s // 10}{s % 10}")
        carry = s // 10
    return " ".join(steps) + " =" + str(p.a + p.b).zfill(digits + 1)


def conversation(p: Problem, digits: int, pad: bool = True) -> list[dict]:
    return [{"role": "user", "content": prompt_text(p, digits, pad)},
            {"role": "assistant", "content": solution_text(p, digits)}]


def is_held_out(p: Problem, test_fraction: float) -> bool:
    return zlib.crc32(f"{p.a}+{p.b}".encode()) % 10_000 < test_fraction * 10_000


def sample_problems(rng: np.random.Generator, n: int, digits: int, *, held_out: bool,
                    test_fraction: float) -> list[Problem]:
    """`n` problems from one side of the split. Each operand's length is uniform in
    1..digits (then the value uniform among numbers of that length), so short and long
    operands are equally common."""
    if digits < 1:
        raise ValueError(f"digits = {digits} must be >= 1")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction = {test_fraction} must be in (0, 1)")
    out: list[Problem] = []
    while len(out) < n:
        la, lb = rng.integers(1, digits + 1, size=2)
        a = int(rng.integers(0 if la == 1 else 10 ** (la - 1), 10 ** la))
        b = int(rng.integers(0 if lb == 1 else 10 ** (lb - 1), 10 ** lb))
        p = Problem(a, b)
        if is_held_out(p, test_fraction) == held_out:
            out.append(p)
    return out


# salts of the problem streams: rng([seed, TRAIN_STREAM]) and rng([seed, EVAL_STREAM])
TRAIN_STREAM = 1
EVAL_STREAM = 2

_ANSWER = re.compile(r"=(\d+)\s*$")


def parse_answer(text: str) -> int | None:
    """The integer after the final `=` of a reply, None when the reply has no answer."""
    m = _ANSWER.search(text.strip())
    return int(m.group(1)) if m else None


def exact_match(p: Problem, reply: str) -> bool:
    return parse_answer(reply) == p.a + p.b
