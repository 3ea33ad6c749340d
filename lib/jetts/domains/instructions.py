"""Instruction following with programmatic checkers (IFEval-style, written by the workspace).

A query asks for a short text about a topic under 2 or 3 verifiable constraints:

    lowercase        the whole text is lower case
    uppercase        the whole text is upper case
    max_words N      at most N words            min_words N    at least N words
    keyword K        contains the word K         no_commas      no ',' anywhere
    end_phrase P     ends with the phrase P      bullets N      exactly N lines starting "* "

A response's score is 1 when every constraint passes (IFEval's prompt-level strict
accuracy), else 0. Offline there is no instruction-following model, so a pool's
candidates are built from a bank of sentences on the topic with random edits (change of
case, bullet formatting, commas removed, keyword or end phrase added, sentences dropped),
each applied with probability 1/2: some candidates satisfy all constraints, most do not.
Position 0 plays "greedy" (a random candidate). `check` is the checker used for grading
any text, e.g. a served model's samples (generators.make_pools with `grade`).
"""
from __future__ import annotations

import re

import numpy as np

from lib.jetts.pools import Pool, Query, Response

NAME = "instructions"
TOPICS = {
    "rivers": ["Rivers carry water from the hills to the sea.",
               "Along the way, they shape valleys and deltas.",
               "Many cities grew up on their banks, because rivers brought trade.",
               "Floods can be dangerous, yet they also renew the soil."],
    "bees": ["Bees collect nectar and pollen from flowers.",
             "In doing so, they pollinate many of our crops.",
             "A hive can hold tens of thousands of workers, all sisters.",
             "Honey is nectar that bees have dried and stored."],
    "libraries": ["Libraries lend books, music and films for free.",
                  "They are also quiet places to study, read or think.",
                  "Librarians help people find reliable information.",
                  "Many libraries now lend laptops, tools and even seeds."],
    "volcanoes": ["Volcanoes form where molten rock reaches the surface.",
                  "Some erupt gently, while others explode violently.",
                  "Ash from large eruptions can cool the climate for years.",
                  "Volcanic soil is rich, so farms often surround volcanoes."],
}
KEYWORDS = ("remarkable", "history", "future", "nature")
END_PHRASES = ("That is all.", "Any questions?", "The end.")
CONSTRAINTS = ("lowercase", "uppercase", "max_words", "min_words", "keyword", "no_commas",
               "end_phrase", "bullets")


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9']+", text)


def check(constraint: dict, text: str) -> bool:
    """One constraint {"kind", "arg"} on a text."""
    k, arg = constraint["kind"], constraint.get("arg")
    if k == "lowercase":
        return text == text.lower()
    if k == "uppercase":
        return text == text.upper()
    if k == "max_words":
        return len(_words(text)) <= arg
    if k == "min_words":
        return len(_words(text)) >= arg
    if k == "keyword":
        return arg.lower() in (w.lower() for w in _words(text))
    if k == "no_commas":
        return "," not in text
    if k == "end_phrase":
        return text.strip().endswith(arg)
    if k == "bullets":
        return sum(line.startswith("* ") for line in text.splitlines()) == arg
    raise ValueError(f"unknown constraint kind {k!r}; expected one of {CONSTRAINTS}")


def describe(c: dict) -> str:
    k, arg = c["kind"], c.get("arg")
    return {"lowercase": "Use only lowercase letters.", "uppercase": "Use only capital letters.",
            "max_words": f"Use at most {arg} words.", "min_words": f"Use at least {arg} words.",
            "keyword": f"Include the word \"{arg}\".", "no_commas": "Do not use any commas.",
            "end_phrase": f"End your answer with the exact phrase \"{arg}\".",
            "bullets": f"Answer with exactly {arg} bullet points, each line starting with \"* \"."}[k]


def make_query(rng: np.random.Generator, qid: str) -> Query:
    topic = list(TOPICS)[int(rng.integers(0, len(TOPICS)))]
    kinds = list(rng.choice([c for c in CONSTRAINTS if c != "uppercase"], size=2, replace=False))
    if "lowercase" not in kinds and rng.random() < 0.2:
        kinds[0] = "uppercase"
    args = {"max_words": int(rng.integers(25, 45)), "min_words": int(rng.integers(20, 35)),
            "keyword": KEYWORDS[int(rng.integers(0, len(KEYWORDS)))],
            "end_phrase": END_PHRASES[int(rng.integers(0, len(END_PHRASES)))],
            "bullets": int(rng.integers(2, 5))}
    cons = [{"kind": k, "arg": args.get(k)} for k in kinds]
    prompt = f"Write a short text about {topic}. " + " ".join(describe(c) for c in cons)
    return Query(qid, prompt, NAME, {"topic": topic, "constraints": cons})


def score(q: Query, text: str) -> float:
    return float(all(check(c, text) for c in q.meta["constraints"]))


def candidate(q: Query, rng: np.random.Generator) -> str:
    """One edited text (module docstring)."""
    sents = list(TOPICS[q.meta["topic"]])
    args = {c["kind"]: c["arg"] for c in q.meta["constraints"]}
    keep = int(rng.integers(2, len(sents) + 1))
    sents = sents[:keep]
    if rng.random() < 0.5 and "keyword" in args:
        sents.insert(1, f"It is a {args['keyword']} subject.")
    if rng.random() < 0.5:
        sents = [s.replace(",", "") for s in sents]
    if rng.random() < 0.5 and "bullets" in args:
        n = args["bullets"]
        sents = (sents * n)[:n]
        text = "\n".join("* " + s for s in sents)
    else:
        text = " ".join(sents)
    if rng.random() < 0.5 and "end_phrase" in args:
        text += " " + args["end_phrase"]
    u = rng.random()
    if u < 0.35:
        text = text.lower()
    elif u < 0.5:
        text = text.upper()
    return text


def make_pools(num_queries: int, size: int, seed: int) -> list[Pool]:
    rng = np.random.default_rng(seed)
    pools = []
    for i in range(num_queries):
        q = make_query(rng, f"if/{i}")
        texts = [candidate(q, rng) for _ in range(size)]
        pools.append(Pool(q, [Response(t, score(q, t), greedy=(j == 0))
                              for j, t in enumerate(texts)]))
    return pools


def grade(q: Query, text: str) -> float:
    return score(q, text)
