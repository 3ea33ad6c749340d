"""Tokenizer: byte round trips, BPE training, special tokens and their errors, chat template."""
import pytest

from lib.lm import chat
from lib.lm.tokenizer import CHAT_SPECIAL_TOKENS, Tokenizer, train_bpe

TEXTS = ["hello world, hello there", "naïve café — 東京 🚀", "def f(x):\n    return x + 1\n",
         "", "   spaces   and\ttabs\n\n"]


@pytest.mark.parametrize("text", TEXTS)
def test_byte_tokenizer_round_trips_any_unicode(text):
    tok = Tokenizer()
    ids = tok.encode(text)
    assert len(ids) == len(text.encode("utf-8"))           # one id per byte without merges
    assert tok.decode(ids) == text


def test_bpe_training_shortens_and_round_trips_and_is_deterministic():
    corpus = ["the cat sat on the mat with the other cat"] * 20 + TEXTS
    tok = train_bpe(corpus, 40)
    assert 0 < len(tok.merges) <= 40
    assert tok.vocab_size == 256 + len(tok.merges) + len(CHAT_SPECIAL_TOKENS)
    for text in corpus:
        assert tok.decode(tok.encode(text)) == text
    assert len(tok.encode(corpus[0])) < len(corpus[0].encode()) / 2
    assert train_bpe(corpus, 40) == tok                     # same data -> same merges
    # the most frequent pair in the corpus is the first merge
    first = tok.token_bytes(256)
    assert first in (b"th", b"he", b"at", b" t", b"e ")


def test_bpe_digits_stay_single_tokens():
    tok = train_bpe(["1234+5678=6912"] * 50, 30)
    ids = tok.encode("1234")
    assert [tok.token_bytes(i) for i in ids] == [b"1", b"2", b"3", b"4"]


def test_save_load_round_trip(tmp_path):
    tok = train_bpe(["abab abab cdcd"] * 5, 5)
    tok.save(str(tmp_path / "t.json"))
    assert Tokenizer.load(str(tmp_path / "t.json")) == tok


def test_special_tokens_only_when_allowed():
    tok = Tokenizer()
    text = "<|user|>hi<|end|>"
    ids = tok.encode(text, allow_special=True)
    assert ids[0] == tok.special_id("<|user|>") and ids[-1] == tok.special_id("<|end|>")
    assert tok.decode(ids) == text
    plain = tok.encode(text)                                 # as literal bytes
    assert not any(tok.is_special(i) for i in plain) and tok.decode(plain) == text


def test_unknown_special_token_is_a_clear_error():
    tok = Tokenizer()
    with pytest.raises(ValueError, match=r"unknown special token '<\|usr\|>'.*<\|user\|>"):
        tok.encode("<|usr|>hello", allow_special=True)
    with pytest.raises(ValueError, match="unknown special token"):
        tok.special_id("<|nope|>")
    with pytest.raises(ValueError, match="must look like"):
        Tokenizer(special_tokens=("<user>",))


def test_chat_template_and_segments_agree():
    msgs = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "q"},
            {"role": "assistant", "content": None,
             "tool_calls": [chat.make_tool_call("f", {"x": 1}, "c0")]},
            {"role": "tool", "tool_call_id": "c0", "content": "42"},
            {"role": "assistant", "content": "done"}]
    full = chat.render_chat(msgs, add_generation_prompt=False)
    assert "".join(t for t, _ in chat.render_chat_segments(msgs)) == full
    assert full.startswith("<|system|>be brief<|end|><|user|>q<|end|><|assistant|><|tool_call|>")
    content, calls = chat.parse_local_tool_calls('ok<|tool_call|>{"name": "f", "arguments": '
                                                 '{"x": 1}}<|/tool_call|>')
    assert content == "ok" and calls[0]["function"]["name"] == "f"
    with pytest.raises(ValueError, match="role"):
        chat.check_messages([{"role": "robot", "content": "x"}])


def test_text_tool_call_format_round_trips():
    text = "Let me check.\n" + chat.text_tool_call("search", {"query": "a b", "k": 3})
    content, calls = chat.parse_text_tool_calls(text)
    assert content == "Let me check."
    assert calls[0]["function"]["name"] == "search"
    assert chat.json.loads(calls[0]["function"]["arguments"]) == {"query": "a b", "k": 3}
