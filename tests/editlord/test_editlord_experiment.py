"""The EditLord binary end to end at the `tiny` config, and its config checks."""
import json
import os

import pytest

from configs.editlord import editlord as cfgmod
from experiments.editlord import train
from lib.common import workdir as wd
from lib.common.config import ConfigError
from lib.editlord import report, rulebook
from lib.lm import sft


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    workdir = str(tmp_path_factory.mktemp("editlord_tiny"))
    results = train.train_and_evaluate(cfgmod.get_config("tiny"), workdir)
    return workdir, results


def test_tiny_run_writes_everything(run):
    workdir, r = run
    assert wd.read_json(os.path.join(workdir, wd.RESULTS))["tag"] == "tiny"
    for f in ("results.md", "rulebook.jsonl", "plots/editing_metrics.png", "plots/rule_recovery.png",
              "data/pairs.jsonl", "data/sft_spec_rules.jsonl", "editor_base/replies.json"):
        assert os.path.exists(os.path.join(workdir, f)), f
    book = rulebook.load(os.path.join(workdir, "rulebook.jsonl"))
    assert len(book) == r["rules"]["num_rules"] >= 1
    convs = sft.load_chat_jsonl(os.path.join(workdir, "data", "sft_spec_rules.jsonl"))
    assert len(convs) == r["augmentation"]["editor_samples"]
    assert convs[0][1]["content"].endswith("[/EDIT SCRIPT]")           # tiny: edit-script format
    assert "[SPEC]" in convs[0][1]["content"] and "[SPEC]" not in sft.load_chat_jsonl(
        os.path.join(workdir, "data", "sft_base.jsonl"))[0][1]["content"]
    assert set(r["editors"]) == {"base", "spec_rules"}
    # tiny: identifier abstraction on, so the editors train on placeholder code only
    assert r["abstract_identifiers"] and all(c[0]["content"].count("def f0(") == 1 for c in convs)
    assert "f0 / v0 placeholders" in report.tables(r)
    for v in r["editors"].values():
        assert set(v["eval"]["invented"]) == set(v["eval"]["conditions"])
    aug, cor = r["augmentation"], r["corpus"]    # tiny: 1 renamed copy per pair + stdlib pairs
    assert cor["pairs"] == 6 and cor["root"].endswith("collections")  # data.corpus_max_pairs
    assert cor["samples"] + sum(cor["augment_skipped"].values()) == cor["pairs"]
    assert aug["samples"] < aug["editor_samples"] - cor["samples"] <= 2 * aug["samples"]
    with open(os.path.join(workdir, "data", "corpus_pairs.jsonl")) as f:
        ids = [json.loads(line)["id"] for line in f]
    assert len(ids) == 6 and all(i.startswith("stdlib:collections") for i in ids)
    assert all(len(c) > 1 for c in r["data"]["near_dup_clusters"])
    for v in r["editors"].values():
        assert v["train"]["steps"] == 3
        clean = v["eval"]["conditions"]["clean"]
        assert clean["n"] == min(r["data"]["test_pairs"], 2)       # eval.max_test_pairs = 2
        assert 0 <= clean["correct"] <= 1 and 0 <= clean["fixed"] <= 1
        n_failed = sum(v["eval"]["failures"]["clean"].values())   # counted, by reason
        assert n_failed <= clean["n"] and (n_failed == clean["n"]) == (clean["parsed"] == 0)
    rp = r["editors"]["spec_rules"]["eval"]["rule_prediction"]
    assert rp["gold"] >= 1 and "rule_prediction" not in r["editors"]["base"]["eval"]
    assert set(r["targets"]) == {"rule_recovery", "rules_beat_base", "robustness"}
    assert "| target | met | measured |" in report.tables(r)


def test_rerun_resumes_and_reproduces(run):
    workdir, r = run
    again = train.train_and_evaluate(cfgmod.get_config("tiny"), workdir)
    for v in ("base", "spec_rules"):
        assert again["editors"][v]["train"]["resumed_from"] == 3
        assert again["editors"][v]["eval"]["conditions"] == r["editors"][v]["eval"]["conditions"]
    assert again["rules"]["num_rules"] == r["rules"]["num_rules"]
    other = cfgmod.get_config("tiny")
    other.rules.tau = 0.5
    with pytest.raises(ValueError, match="different config"):
        train.train_and_evaluate(other, workdir)


def test_config_errors_before_compute(tmp_path):
    c = cfgmod.get_config("tiny")
    c.rules.backend = "served"
    with pytest.raises(ConfigError, match="served.base_url"):
        train.train_and_evaluate(c, str(tmp_path / "a"))
    c = cfgmod.get_config("tiny")
    c.editor.variants = ("base", "nope")
    with pytest.raises(ConfigError, match="editor.variants"):
        train.train_and_evaluate(c, str(tmp_path / "b"))
    c = cfgmod.get_config("tiny")
    c.editor.max_new_tokens = 4096
    with pytest.raises(ConfigError, match="max_new_tokens"):
        train.train_and_evaluate(c, str(tmp_path / "c"))
    c = cfgmod.get_config("tiny")
    c.data.source = "user"
    with pytest.raises(ConfigError, match="data.user_pairs"):
        train.train_and_evaluate(c, str(tmp_path / "d"))
    assert not os.path.exists(tmp_path / "a")
