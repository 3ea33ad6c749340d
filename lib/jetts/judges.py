"""Judges behind one interface: prompted LLM judges, simulated judges, the oracle.

    j = PromptedJudge(lm, fmt="prometheus")          # any lib.lm.client.LanguageModel
    ratings = j.rate(query, responses, rubric="likert")    # [Judgement] value in 1..5
    verdicts = j.compare(query, [(ra, rb), ...])           # [Judgement] value s in {0, 0.5, 1}
    j.stats      # {"single": {"calls": .., "parse_failures": ..}, "pairwise": {...}}

Conventions (JETTS `jetts/judge`):
* single-instance rating: a score in 1..`max_score` (5). `rubric="likert"` asks for a
  holistic 1-5 rating, `rubric="additive"` for the Prometheus-style additive rubric (1 plus
  one point per satisfied criterion, four criteria, so again 1..5).
* pairwise: s = 0 when response A (shown first) is better, s = 1 when B is; s = 0.5 is a
  tie (only the simulated judge and a parsed "TIE" produce it; JETTS judges must pick).
* `partial=True` adds the notes' "the response is streaming / partial, judge how promising
  it is" instruction (beam search on prefixes).
* **Parse failures** (notes: "parse failures get a random score"): a single rating that
  cannot be parsed gets a uniformly random integer score in 1..max_score; an unparsable
  pairwise verdict gets a uniformly random s in {0, 1}. Either way the `Judgement` has
  `parsed=False`, the raw text is kept, and `stats[kind]["parse_failures"]` counts it;
  protocols add these counts to their results, so a failure is never silently dropped.
* **Truncation**: a prompted judge's reply that stopped at `max_tokens` (finish reason
  "length") is flagged `truncated=True` and counted in `stats[kind]["truncated"]`, parsed or
  not: a rate above a few per cent means `max_tokens` is too small for the judge's
  well-formed replies (their verdict comes last, so a cut reply is a parse failure).
  `truncation_rate(stats)` gives the rate; the experiment checks it (train.py).

Prompt formats (`FORMATS`): "prometheus" (`###Task Description ... ###Feedback:`, output
`Feedback: ... [RESULT] A|B|1-5`), "sfr" (`**Reasoning:** ... **Result:** A|B|1-5`, with
the anti-position / anti-length-bias rules), "compact" (the Prometheus output format with a
few-word instruction, for the workspace's small LM whose context is short). The wording is
ours; the structure, output formats and parsing follow the notes (`jetts/prompts`).

`SimulatedJudge` writes Prometheus-format text from the ground truth with set accuracy,
position bias, length bias, tie rate and malformed-output rate, and is parsed by the same
code as a real judge (so the failure path is exercised). `OracleJudge` returns the ground
truth (for an inner tree node: the best leaf below it).
"""
from __future__ import annotations

import abc
import dataclasses
import re
from collections.abc import Sequence
from typing import ClassVar, NamedTuple

import numpy as np

import jax

from lib.jetts.pools import Query, Response
from lib.lm import chat, sampling
from lib.lm.client import LanguageModel
from lib.lm.local import LocalLM

RUBRICS = ("likert", "additive")
KINDS = ("single", "pairwise")


@dataclasses.dataclass
class Judgement:
    value: float            # single: score; pairwise: s (0 = A better, 1 = B better, 0.5 tie)
    parsed: bool            # False: the fallback value of a parse failure
    text: str = ""          # the judge's raw output
    critique: str = ""      # its explanation (feedback / reasoning)
    truncated: bool = False  # the reply stopped at max_tokens (finish reason "length")


class Reply(NamedTuple):
    """One raw judge output and whether generation stopped at `max_tokens`."""
    text: str
    truncated: bool = False


def _new_stats() -> dict:
    return {k: {"calls": 0, "parse_failures": 0, "truncated": 0, "failure_examples": []}
            for k in KINDS}


def truncation_rate(stats: dict) -> tuple[int, int, float]:
    """(truncated replies, calls, rate) summed over the kinds of a judge's `stats`."""
    calls = sum(stats[k]["calls"] for k in KINDS)
    cut = sum(stats[k]["truncated"] for k in KINDS)
    return cut, calls, (cut / calls if calls else 0.0)


class Judge(abc.ABC):
    """Base class: `rate` (single instance) and `compare` (pairwise); see module docstring."""

    name: str = "judge"
    max_score: float = 5.0

    def __init__(self, name: str, seed: int = 0):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.stats = _new_stats()

    def reset_stats(self) -> None:
        self.stats = _new_stats()

    @abc.abstractmethod
    def rate(self, query: Query, responses: Sequence[Response], *, rubric: str = "likert",
             partial: bool = False) -> list[Judgement]:
        """One single-instance `Judgement` per response."""

    def compare(self, query: Query, pairs: Sequence[tuple[Response, Response]], *,
                partial: bool = False) -> list[Judgement]:
        """One pairwise `Judgement` per (A, B). Default (JETTS `pairwise_compare_batch`):
        compare the single ratings, s = 1 if r_B > r_A, 0 if r_A > r_B, 0.5 if equal."""
        flat = [r for pair in pairs for r in pair]
        ratings = self.rate(query, flat, partial=partial)
        out = []
        for k in range(len(pairs)):
            a, b = ratings[2 * k].value, ratings[2 * k + 1].value
            s = 1.0 if b > a else 0.0 if a > b else 0.5
            out.append(Judgement(s, ratings[2 * k].parsed and ratings[2 * k + 1].parsed))
        self.stats["pairwise"]["calls"] += len(pairs)
        return out

    # ---------------------------------------------------------------- failure handling
    def _record(self, kind: str, judgement: Judgement) -> Judgement:
        st = self.stats[kind]
        st["calls"] += 1
        st["truncated"] += int(judgement.truncated)
        if not judgement.parsed:
            st["parse_failures"] += 1
            if len(st["failure_examples"]) < 3:
                st["failure_examples"].append(judgement.text[:200])
        return judgement

    def _single_fallback(self) -> float:
        return float(self.rng.integers(1, int(self.max_score) + 1))

    def _pair_fallback(self) -> float:
        return float(self.rng.integers(0, 2))


# ----------------------------------------------------------------------------- formats

PARTIAL_NOTE = ("Note: the response is streaming and only partial. Judge how promising it is: "
                "how likely it is to lead to a correct and complete final answer.")

ADDITIVE_RUBRIC = (
    "Start from 1 point and add one point for each criterion the response meets:\n"
    "- each step it takes is correct;\n"
    "- it reaches a final answer in the requested form;\n"
    "- the final answer is correct;\n"
    "- it is complete and without unnecessary content.\n"
    "The score is the total, from 1 to 5.")
LIKERT_RUBRIC = ("Rate the response from 1 (wrong or unhelpful) to 5 (fully correct and "
                 "helpful), judging correctness above all.")


@dataclasses.dataclass(frozen=True)
class Format:
    """Prompt rendering and output parsing of one judge family."""
    name: str

    def single_prompt(self, query: str, response: str, rubric: str, partial: bool) -> str:
        raise NotImplementedError

    def pairwise_prompt(self, query: str, a: str, b: str, partial: bool) -> str:
        raise NotImplementedError

    # Subclasses give the verdict patterns (group 1: the score, or A | B | TIE) and
    # `_critique(text)`; the parsers below read the last verdict in the text.
    _SINGLE: ClassVar[re.Pattern]
    _PAIRWISE: ClassVar[re.Pattern]

    @staticmethod
    def _critique(text: str) -> str:
        raise NotImplementedError

    def parse_single(self, text: str, max_score: float) -> tuple[float | None, str]:
        """(score, critique) from the last single-score verdict; (None, "") when there is
        none or it is outside 1..max_score."""
        v = _last(self._SINGLE, text)
        if v is None or not 1 <= int(v) <= max_score:
            return None, ""
        return float(v), self._critique(text)

    def parse_pairwise(self, text: str) -> tuple[float | None, str]:
        """(P(B is better) in {0, 0.5, 1}, critique) from the last pairwise verdict."""
        v = _last(self._PAIRWISE, text)
        return (None, "") if v is None else (_PAIR[v], self._critique(text))


_PAIR = {"A": 0.0, "B": 1.0, "TIE": 0.5}


def _last(pattern: re.Pattern, text: str):
    found = pattern.findall(text)
    return found[-1] if found else None


class PrometheusFormat(Format):
    _SINGLE = re.compile(r"\[RESULT\]\s*\(?\s*(\d+)\s*\)?")
    _PAIRWISE = re.compile(r"\[RESULT\]\s*\(?\s*(A|B|TIE)\b")

    def single_prompt(self, query, response, rubric, partial):
        rub = ADDITIVE_RUBRIC if rubric == "additive" else LIKERT_RUBRIC
        note = f"\n{PARTIAL_NOTE}\n" if partial else ""
        return ("###Task Description:\nAn instruction, a response to evaluate and a score rubric "
                "are given.\n1. Write a detailed feedback that assesses the response strictly "
                "by the rubric.\n2. Then give an integer score from 1 to 5.\n3. Output format: "
                "\"Feedback: (feedback) [RESULT] (an integer from 1 to 5)\"\n" + note +
                f"\n###Instruction:\n{query}\n\n###Response to evaluate:\n{response}\n\n"
                f"###Score Rubric:\n{rub}\n\n###Feedback:")

    def pairwise_prompt(self, query, a, b, partial):
        note = f"\n{PARTIAL_NOTE}\n" if partial else ""
        return ("###Task Description:\nAn instruction, two responses and a score rubric are "
                "given.\n1. Write a detailed feedback comparing the two responses strictly by "
                "the rubric.\n2. Then choose the better response, A or B.\n3. Output format: "
                "\"Feedback: (feedback) [RESULT] (A or B)\"\n" + note +
                f"\n###Instruction:\n{query}\n\n###Response A:\n{a}\n\n###Response B:\n{b}\n\n"
                f"###Score Rubric:\n{LIKERT_RUBRIC}\n\n###Feedback:")

    @staticmethod
    def _critique(text: str) -> str:
        body = text.split("[RESULT]")[0].strip()
        return body[len("Feedback:"):].strip() if body.startswith("Feedback:") else body


class SFRFormat(Format):
    _SINGLE = re.compile(r"\*\*Result:\*\*\s*(\d+)")
    _PAIRWISE = re.compile(r"\*\*Result:\*\*\s*(A|B|TIE)\b")
    _RULES = ("Do not let the order in which the responses are shown affect your judgement. "
              "Do not prefer a response because it is longer or shorter.")

    def single_prompt(self, query, response, rubric, partial):
        rub = ADDITIVE_RUBRIC if rubric == "additive" else LIKERT_RUBRIC
        note = f"{PARTIAL_NOTE}\n" if partial else ""
        return (f"You are evaluating a response to an instruction.\n{rub}\n{note}"
                f"Check every step for correctness before scoring.\n\n"
                f"Instruction:\n{query}\n\nResponse:\n{response}\n\n"
                "Answer in the form:\n**Reasoning:** <your reasoning>\n**Result:** <1-5>")

    def pairwise_prompt(self, query, a, b, partial):
        note = f"{PARTIAL_NOTE}\n" if partial else ""
        return (f"You are comparing two responses to an instruction. Prefer the response that "
                f"is correct; check every step. {self._RULES}\n{note}\n"
                f"Instruction:\n{query}\n\nResponse A:\n{a}\n\nResponse B:\n{b}\n\n"
                "Answer in the form:\n**Reasoning:** <your reasoning>\n**Result:** <A or B>")

    @staticmethod
    def _critique(text: str) -> str:
        body = text.split("**Result:**")[0]
        return body.replace("**Reasoning:**", "").strip()


class CompactFormat(PrometheusFormat):
    """Prometheus output format with a few-word prompt (the small LM's short context)."""

    def single_prompt(self, query, response, rubric, partial):
        tag = "additive" if rubric == "additive" else "likert"
        return f"judge {tag}{' partial' if partial else ''}\n{query}\n{response}"

    def pairwise_prompt(self, query, a, b, partial):
        return f"judge pair{' partial' if partial else ''}\n{query}\nA {a}\nB {b}"


FORMATS: dict[str, Format] = {"prometheus": PrometheusFormat("prometheus"),
                              "sfr": SFRFormat("sfr"), "compact": CompactFormat("compact")}


def get_format(name: str) -> Format:
    if name not in FORMATS:
        raise ValueError(f"unknown judge format {name!r}; expected one of {sorted(FORMATS)}")
    return FORMATS[name]


# ----------------------------------------------------------------------------- text judges


class TextJudge(Judge):
    """A judge that writes text in a `Format`, parsed with the failure rule above."""

    def __init__(self, name: str, fmt: str = "prometheus", seed: int = 0):
        super().__init__(name, seed)
        self.fmt = get_format(fmt)

    @abc.abstractmethod
    def _single_replies(self, query: Query, responses: Sequence[Response], rubric: str,
                        partial: bool) -> list[Reply]:
        """Raw judge outputs, one per response."""

    @abc.abstractmethod
    def _pairwise_replies(self, query: Query, pairs: Sequence[tuple[Response, Response]],
                          partial: bool) -> list[Reply]:
        """Raw judge outputs, one per pair."""

    def rate(self, query, responses, *, rubric="likert", partial=False):
        if rubric not in RUBRICS:
            raise ValueError(f"rubric = {rubric!r}; expected one of {RUBRICS}")
        out = []
        for text, cut in self._single_replies(query, responses, rubric, partial):
            v, crit = self.fmt.parse_single(text, self.max_score)
            j = (Judgement(v, True, text, crit, cut) if v is not None
                 else Judgement(self._single_fallback(), False, text, truncated=cut))
            out.append(self._record("single", j))
        return out

    def compare(self, query, pairs, *, partial=False):
        out = []
        for text, cut in self._pairwise_replies(query, pairs, partial):
            v, crit = self.fmt.parse_pairwise(text)
            j = (Judgement(v, True, text, crit, cut) if v is not None
                 else Judgement(self._pair_fallback(), False, text, truncated=cut))
            out.append(self._record("pairwise", j))
        return out


class PromptedJudge(TextJudge):
    """An LLM judge: greedy decoding (JETTS: temperature 0, max_tokens 1024) of `fmt`'s
    prompts through any `LanguageModel` (served via `OpenAIClient`, or `LocalLM`)."""

    def __init__(self, lm: LanguageModel, fmt: str = "prometheus", *, name: str | None = None,
                 max_tokens: int = 1024, seed: int = 0, max_workers: int = 1):
        super().__init__(name or f"{lm.name}:{fmt}", fmt, seed)
        self.lm, self.max_tokens, self.max_workers = lm, max_tokens, max_workers

    def _ask(self, prompts: Sequence[str]) -> list[Reply]:
        if isinstance(self.lm, LocalLM):
            return local_greedy_replies(self.lm, prompts, self.max_tokens)
        reqs = [dict(messages=[{"role": "user", "content": p}], n=1, temperature=0.0,
                     max_tokens=self.max_tokens, seed=0) for p in prompts]
        return [Reply(r.choices[0].text, r.choices[0].finish_reason == "length")
                for r in self.lm.chat_many(reqs, max_workers=self.max_workers)]

    def _single_replies(self, query, responses, rubric, partial):
        return self._ask([self.fmt.single_prompt(query.prompt, r.text, rubric, partial)
                          for r in responses])

    def _pairwise_replies(self, query, pairs, partial):
        return self._ask([self.fmt.pairwise_prompt(query.prompt, a.text, b.text, partial)
                          for a, b in pairs])


def local_greedy_replies(lm: LocalLM, prompts: Sequence[str], max_tokens: int,
                         max_rows: int = 128) -> list[Reply]:
    """Greedy replies of a `LocalLM` to single-turn prompts, decoded in batches, each with
    its truncation flag (finish reason "length"). Equal to `lm.chat(..., temperature=0)`
    one by one (left-padded batches decode exactly like single prompts, tests/lm), only
    faster."""
    ids = [lm.tok.encode(chat.render_chat([{"role": "user", "content": p}]), allow_special=True)
           for p in prompts]
    out: list[Reply] = []
    for start in range(0, len(ids), max_rows):
        res = sampling.generate(lm.cfg, lm.params, ids[start:start + max_rows],
                                key=jax.random.key(0), n=1, max_tokens=max_tokens,
                                temperature=0.0, stop_ids=lm._stop_ids)
        out += [Reply(lm.tok.decode(r[0].tokens), r[0].finish_reason == "length") for r in res]
    return out


@dataclasses.dataclass(frozen=True)
class SimulatedSpec:
    """Behaviour of a `SimulatedJudge` (all probabilities).

    pairwise, per pair (A, B), one uniform draw u:
      u < tie_rate                                   -> TIE
      u < tie_rate + position_bias                   -> A (the first shown)
      u < tie_rate + position_bias + length_bias     -> the longer text (A if equal)
      otherwise -> the better response with probability `accuracy` (else the worse one);
                   a random one when both have the same ground-truth score.
    single: with probability length_bias the score is 5 if the text is longer than the
      mean length of the batch else 1; otherwise, with probability `accuracy`, the score is
      round(1 + 4 * truth), else uniform in 1..5.
    Then with probability `malformed_rate` the output text is replaced by one the parser
    cannot read (the parse-failure rule applies).
    """
    accuracy: float = 0.8
    position_bias: float = 0.0
    length_bias: float = 0.0
    tie_rate: float = 0.0
    malformed_rate: float = 0.0

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"SimulatedSpec.{f.name} = {v} must be in [0, 1]")
        if self.tie_rate + self.position_bias + self.length_bias > 1.0:
            raise ValueError("tie_rate + position_bias + length_bias must be <= 1")


MALFORMED = "I find both responses reasonable and cannot decide."


class SimulatedJudge(TextJudge):
    """Prometheus-format outputs from the ground truth (see `SimulatedSpec`)."""

    def __init__(self, spec: SimulatedSpec, *, name: str = "simulated", seed: int = 0):
        super().__init__(name, "prometheus", seed)
        self.spec = spec
        self.draws = np.random.default_rng([seed, 1])

    def _maybe_malformed(self, text: str) -> str:
        return MALFORMED if self.draws.random() < self.spec.malformed_rate else text

    def _single_replies(self, query, responses, rubric, partial):
        s, out = self.spec, []
        mean_len = np.mean([len(r.text) for r in responses]) if responses else 0.0
        for r in responses:
            if self.draws.random() < s.length_bias:
                v = 5 if len(r.text) > mean_len else 1
            elif self.draws.random() < s.accuracy:
                v = int(round(1 + 4 * float(np.clip(r.score, 0, 1))))
            else:
                v = int(self.draws.integers(1, 6))
            out.append(Reply(self._maybe_malformed(f"Feedback: simulated. [RESULT] {v}")))
        return out

    def _pairwise_replies(self, query, pairs, partial):
        s, out = self.spec, []
        for a, b in pairs:
            u = self.draws.random()
            if u < s.tie_rate:
                v = "TIE"
            elif u < s.tie_rate + s.position_bias:
                v = "A"
            elif u < s.tie_rate + s.position_bias + s.length_bias:
                v = "B" if len(b.text) > len(a.text) else "A"
            elif a.score == b.score:
                v = "A" if self.draws.random() < 0.5 else "B"
            else:
                right = "A" if a.score > b.score else "B"
                wrong = "B" if right == "A" else "A"
                v = right if self.draws.random() < s.accuracy else wrong
            out.append(Reply(self._maybe_malformed(f"Feedback: simulated. [RESULT] {v}")))
        return out


class ScoreJudge(Judge):
    """A judge that outputs real-valued scores (reward models, the oracle); never fails to
    parse. `compare` uses the base rule (compare the two scores)."""

    @abc.abstractmethod
    def scores(self, query: Query, responses: Sequence[Response], partial: bool) -> np.ndarray:
        """(len(responses),) scores, higher = better."""

    def rate(self, query, responses, *, rubric="likert", partial=False):
        if rubric not in RUBRICS:
            raise ValueError(f"rubric = {rubric!r}; expected one of {RUBRICS}")
        return [self._record("single", Judgement(float(v), True))
                for v in self.scores(query, responses, partial)]


class OracleJudge(ScoreJudge):
    """The ground truth (`Response.score`; for a tree prefix the best leaf below it)."""

    def __init__(self, name: str = "oracle", seed: int = 0):
        super().__init__(name, seed)

    def scores(self, query, responses, partial):
        return np.asarray([r.score for r in responses], float)
