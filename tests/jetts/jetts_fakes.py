"""Shared test helpers for tests/jetts: a scripted LanguageModel and random trees."""

from lib.jetts.pools import Node, Query, Tree, propagate_scores
from lib.lm.client import ChatResult, Choice, LanguageModel


class ScriptedLM(LanguageModel):
    """Answers `chat` with `reply(prompt_text)` (finish reason `finish`); records the
    prompts it saw."""

    def __init__(self, reply, name="scripted", finish="stop"):
        self.reply, self.name, self.prompts, self.finish = reply, name, [], finish

    def chat(self, messages, *, n=1, temperature=1.0, top_p=1.0, max_tokens=256, stop=None,
             logprobs=False, top_logprobs=0, tools=None, seed=None):
        text = messages[-1]["content"]
        self.prompts.append(text)
        return ChatResult([Choice(i, self.reply(text), [], self.finish, None) for i in range(n)],
                          self.name)

    def complete(self, prompt, **kw):
        raise NotImplementedError


def random_tree(rng, n=4, m=2, depth=3, qid="q"):
    """A full tree: root -> n children, each inner node at depth < `depth` -> m children
    (first greedy); leaf scores random in {0, 0.25, ..., 1}; rollouts = first leaf below."""
    nodes = [Node(-1, 0, "", [], False, 0.0)]

    def add(parent, greedy):
        d = nodes[parent].depth + 1
        text = (nodes[parent].text + " " if nodes[parent].text else "") + f"s{len(nodes)}"
        nodes.append(Node(parent, d, text, [], d == depth,
                          float(rng.integers(0, 5)) / 4 if d == depth else 0.0, greedy))
        nodes[parent].children.append(len(nodes) - 1)
        return len(nodes) - 1

    frontier = [add(0, k == 0) for k in range(n)]
    while frontier:
        nxt = []
        for i in frontier:
            if not nodes[i].leaf:
                nxt += [add(i, k == 0) for k in range(m)]
        frontier = nxt
    propagate_scores(nodes)
    for nd in nodes:
        j = nodes.index(nd)
        while not nodes[j].leaf:
            j = nodes[j].children[0]
        nd.rollout, nd.rollout_score = nodes[j].text, nodes[j].score
    return Tree(Query(qid, "prompt", "test"), nodes, n, m, depth)
