"""lib.lm.finetune: the one SFT path (loss falls, run reloads, resume, too-long rules)."""
import jax
import numpy as np
import pytest

from lib.common import train_loop
from lib.lm import finetune as ft
from lib.lm.local import load_run
from lib.lm.model import LMConfig
from lib.lm.tokenizer import Tokenizer

TOK = Tokenizer()
CFG = LMConfig(vocab_size=TOK.vocab_size, d_model=16, num_layers=1, num_heads=2, d_ff=32,
               max_len=48)
CONVS = [[{"role": "user", "content": f"{a}+1"}, {"role": "assistant", "content": str(a + 1)}]
         for a in range(8)]
OPTIM = dict(lr=1e-2, num_steps=30, warmup_steps=0, weight_decay=0.0, grad_clip=1.0)


def _loop(steps=30):
    return train_loop.LoopConfig(num_steps=steps, log_every=1, checkpoint_every=steps,
                                 keep_checkpoints=1, seed=0)


def test_finetune_lowers_the_loss_reloads_and_a_rerun_resumes(tmp_path):
    lm, info = ft.finetune(CFG, TOK, CONVS, str(tmp_path), batch_size=4, seed=0,
                           loop=_loop(), optim=OPTIM)
    assert info["steps"] == 30 and info["examples"] == 8 and info["too_long"] == 0
    first, last = info["loss_curve"][0][1], info["final_loss"]
    assert last < 0.7 * first
    cfg, params, tok, step = load_run(str(tmp_path))
    assert cfg == CFG and step == 30 and tok.vocab_size == TOK.vocab_size
    for a, b in zip(jax.tree.leaves(params), jax.tree.leaves(lm.params), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    _, again = ft.finetune(CFG, TOK, CONVS, str(tmp_path), batch_size=4, seed=0,
                           loop=_loop(), optim=OPTIM)
    assert again["resumed_from"] == 30


def test_too_long_conversations_raise_unless_skipped_and_too_few_left_is_named(tmp_path):
    long = [[{"role": "user", "content": "x" * 200}, {"role": "assistant", "content": "y"}]]
    with pytest.raises(ValueError):
        ft.encode(TOK, CONVS[:2] + long, CFG.max_len)
    data, skipped = ft.encode(TOK, CONVS[:2] + long, CFG.max_len, skip_too_long=True)
    assert skipped == 1 and len(data["tokens"]) == 2
    with pytest.raises(ValueError, match="2 training conversations fit max_len = 48; fewer "
                                         "than the batch size 4"):
        ft.finetune(CFG, TOK, CONVS[:2] + long, str(tmp_path), batch_size=4, seed=0,
                    loop=_loop(), optim=OPTIM, skip_too_long=True)


def test_served_lm_reads_the_key_variable_and_tool_mode_of_its_block(monkeypatch):
    import ml_collections
    monkeypatch.setenv("SERVED_TEST_KEY", "sk-123")
    keyed = ml_collections.ConfigDict(dict(base_url="http://127.0.0.1:9/v1", model="m",
                                           api_key_env="SERVED_TEST_KEY", cache_dir="",
                                           tool_mode="text"))
    lm = ft.served_lm(keyed)
    assert (lm.api_key, lm.tool_mode, lm.model) == ("sk-123", "text", "m")
    # SWE-Gym's block has no api_key_env; EditLord's and JETTS's have no tool_mode
    bare = ml_collections.ConfigDict(dict(base_url="http://127.0.0.1:9/v1", model="m",
                                          cache_dir=""))
    lm = ft.served_lm(bare)
    assert (lm.api_key, lm.tool_mode) == (None, "auto")
    keyed.tool_mode = "sideways"
    with pytest.raises(ValueError, match="tool_mode = 'sideways'"):
        ft.served_lm(keyed)
