"""Whisper's text decoder run step by step in NumPy, keeping its cache, over a few tokens.

Held decoding (`voiced.audio.grammar_decode`) decodes again from every place the cell's sentences
correct the free path. CTranslate2's `Whisper.generate` keeps no state between calls: each call
runs its forced prefix through the decoder again one token at a time (~7 ms a token here), so
a correction late in an order cost as much as decoding the order. This decoder runs a prefix
in one pass (a few ms for a whole order) and then goes on a token at a time on its
self-attention cache (~3 ms a step), and it scores only the tokens the cell's sentences are
spelt with (`StepDecoder.tokens`): the output layer is the costly part of a step, and a token
no sentence spells is never taken.

Its log-probabilities are normalised over those tokens only, so they are upper bounds of the
model's own: enough to rank ways and give up the hopeless (`grammar_decode`), never to compare
with a free reading; a sentence found is scored again by CTranslate2 for that (`Judge.said`,
its words; the end of the text's is this decoder's).

The weights are read from the CTranslate2 model the transcriber loaded (`model.bin`, the
decoder's part only: ~37 MB as float32 for tiny.en); the encoder's output comes from
CTranslate2.
"""

from __future__ import annotations

import contextlib
import functools
import struct
import threading
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float32]

_DTYPES: tuple[Any, ...] = (np.float32, np.int8, np.int16, np.int32, np.float16, None)
"""CTranslate2's type ids in `model.bin` (its `_dtype_to_type_id`), bfloat16 unread."""
LAYER_NORM_EPS = 1e-5


class ModelFileError(ValueError):
    """`model.bin` is not a CTranslate2 Whisper model this decoder can read."""


class Embeddings:
    """The token embeddings, left in the file: a row is read when first asked for (mapped
    instead, the rows of a cell's tokens, spread over the file, paged all 40 MB in)."""

    def __init__(self, path: Path, offset: int, shape: tuple[int, int], dtype: Any) -> None:
        self.path, self.offset, self.shape, self.dtype = path, offset, shape, np.dtype(dtype)
        self._rows: dict[int, Array] = {}

    def __getitem__(self, tokens: Sequence[int]) -> Array:
        missing = [t for t in dict.fromkeys(tokens) if t not in self._rows]
        if missing:
            size = self.shape[1] * self.dtype.itemsize
            with self.path.open("rb") as file:
                for token in missing:
                    if not 0 <= token < self.shape[0]:
                        raise IndexError(f"token {token} outside the vocabulary")
                    file.seek(self.offset + token * size)
                    row = np.frombuffer(file.read(size), dtype=self.dtype)
                    self._rows[token] = row.astype(np.float32)
        return np.stack([self._rows[t] for t in tokens])


@dataclass(frozen=True)
class _Variable:
    """One variable's header in `model.bin`; its data is `size` bytes from `offset`."""

    key: str
    shape: list[int]
    dtype: Any
    """NumPy's type (None: one this module does not read, bfloat16)."""
    offset: int
    size: int


def _variables(path: Path, file: IO[bytes]) -> Iterator[_Variable]:
    """The variables of the CTranslate2 Whisper model `file` (format of
    `ctranslate2.specs.ModelSpec._serialize`), header by header; after each, the file is at the
    next one whatever the caller read. A file that is not one, or cut short, is a
    `ModelFileError` naming `path`."""
    length = path.stat().st_size
    version = _unpack(file, "I")
    if not 0 < version <= MAX_BINARY_VERSION:
        raise ModelFileError(f"{path}: not a CTranslate2 model file (binary version {version})")
    name = _string(file)
    if name != "WhisperSpec":
        raise ModelFileError(f"{path}: a {name or 'model'}, not a Whisper model")
    _unpack(file, "I")  # revision
    for _ in range(_unpack(file, "I")):
        key = _string(file)
        shape = [_unpack(file, "I") for _ in range(_unpack(file, "B"))]
        kind, size = _unpack(file, "B"), _unpack(file, "I")
        offset = file.tell()
        if offset + size > length:
            raise ModelFileError(
                f"{path}: cut short ({key} needs {offset + size} bytes, the file has {length})"
            )
        yield _Variable(key, shape, _DTYPES[kind] if kind < len(_DTYPES) else None, offset, size)
        file.seek(offset + size)


def read_decoder(path: Path) -> dict[str, Any]:
    """The decoder's variables of a CTranslate2 Whisper `model.bin`, read one by one, float16
    made float32: the encoder's are skipped unread, and the embeddings (51,864 rows, a cell's
    tokens among them) are left in the file (`Embeddings`)."""
    found: dict[str, Any] = {}
    with path.open("rb") as file:
        for v in _variables(path, file):
            if not v.key.startswith("decoder/") or v.dtype is None:
                continue
            if v.key == "decoder/embeddings/weight":
                found[v.key] = Embeddings(path, v.offset, (v.shape[0], v.shape[1]), v.dtype)
            elif v.key.endswith("_scale") or (v.shape and v.dtype not in (np.float16, np.float32)):
                raise ModelFileError(f"{path}: {v.key} is quantized ({np.dtype(v.dtype)})")
            else:
                # Made float32 one by one: the stored float16 never all held at once.
                raw = np.frombuffer(file.read(v.size), dtype=v.dtype)
                raw = raw.reshape(v.shape) if v.shape else raw
                found[v.key] = raw.astype(np.float32) if v.dtype == np.float16 else raw
    if "decoder/embeddings/weight" not in found:
        raise ModelFileError(f"{path}: no decoder embeddings")
    return found


MAX_BINARY_VERSION = 64
"""Far above CTranslate2's own (6 in 4.x): a larger number is no model file's."""


def model_file_problem(path: Path) -> str | None:
    """What makes `path` no CTranslate2 Whisper model file, from its headers alone (each
    variable's data skipped, not read: a file cut short is found by where it ends), or None."""
    try:
        with path.open("rb") as file:
            for _ in _variables(path, file):
                pass
    except ModelFileError as exc:
        return str(exc)
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path}: {exc}"
    return None


def _unpack(file: IO[bytes], fmt: str) -> int:
    size = struct.calcsize(fmt)
    data = file.read(size)
    if len(data) != size:
        raise ModelFileError("model.bin ends early")
    return int(struct.unpack(fmt, data)[0])


def _string(file: IO[bytes]) -> str:
    size = _unpack(file, "H")
    return file.read(size)[:-1].decode("utf-8")


@dataclass(frozen=True)
class _Layer:
    norm1: tuple[Array, Array]
    qkv: tuple[Array, Array]
    out1: tuple[Array, Array]
    norm2: tuple[Array, Array]
    query: tuple[Array, Array]
    memory: tuple[Array, Array]
    out2: tuple[Array, Array]
    norm3: tuple[Array, Array]
    up: tuple[Array, Array]
    down: tuple[Array, Array]


class DecoderWeights:
    """The decoder of one Whisper model, as float32 (~37 MB for tiny.en), the embeddings
    read from the file as rows are needed."""

    def __init__(self, variables: dict[str, Any]) -> None:
        def get(key: str) -> Array:
            return np.ascontiguousarray(variables[f"decoder/{key}"], dtype=np.float32)

        def linear(key: str) -> tuple[Array, Array]:
            # Transposed in place of the stored matrix, which is let go (memory at load).
            weight = np.ascontiguousarray(get(f"{key}/weight").T)
            variables[f"decoder/{key}/weight"] = weight
            return weight, get(f"{key}/bias")

        def norm(key: str) -> tuple[Array, Array]:
            return get(f"{key}/gamma"), get(f"{key}/beta")

        self.heads = int(np.asarray(variables["decoder/num_heads"]).reshape(-1)[0])
        self.embeddings: Embeddings = variables["decoder/embeddings/weight"]
        self.positions = get("position_encodings/encodings")
        self.norm = norm("layer_norm")
        count = 0
        while f"decoder/layer_{count}/ffn/linear_0/weight" in variables:
            count += 1
        self.layers = [
            _Layer(
                norm(f"layer_{i}/self_attention/layer_norm"),
                linear(f"layer_{i}/self_attention/linear_0"),
                linear(f"layer_{i}/self_attention/linear_1"),
                norm(f"layer_{i}/attention/layer_norm"),
                linear(f"layer_{i}/attention/linear_0"),
                linear(f"layer_{i}/attention/linear_1"),
                linear(f"layer_{i}/attention/linear_2"),
                norm(f"layer_{i}/ffn/layer_norm"),
                linear(f"layer_{i}/ffn/linear_0"),
                linear(f"layer_{i}/ffn/linear_1"),
            )
            for i in range(count)
        ]
        self._outputs: dict[tuple[int, ...], Array] = {}

    def output(self, tokens: tuple[int, ...]) -> Array:
        """The output layer for `tokens` only (the embeddings' rows: Whisper ties them)."""
        found = self._outputs.get(tokens)
        if found is None:
            found = np.ascontiguousarray(self.embeddings[list(tokens)].T)
            self._outputs = {tokens: found}  # one cell's tokens at a time
        return found


_directories: weakref.WeakKeyDictionary[Any, Path] = weakref.WeakKeyDictionary()


def remember_directory(model: Any, directory: str | Path) -> None:
    """Where `model` (a faster_whisper.WhisperModel, which does not keep it) was loaded from."""
    _directories[model] = Path(directory)


def directory_of(model: Any) -> Path | None:
    """Where `model` was loaded from (None: not known, a model loaded elsewhere)."""
    try:
        return _directories.get(model)
    except TypeError:  # not weakly referable: not one `remember_directory` was told of
        return None


@functools.cache
def _blas() -> Any:
    from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

    return ThreadpoolController()


_limit_lock = threading.Lock()
_limit: list[Any] = []
"""The one-thread limit in force, and how many hold it: `one_thread` may overlap itself."""


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """NumPy's BLAS on one thread while held. The step decoder's products are small:
    OpenBLAS's second thread saves nothing on them alone, and beside the daemon's other
    threads (CTranslate2's, the keyword models') it made a held decode twice as slow (measured
    with two daemons running). The setting is the process's: held by several at once, it is
    set by the first and restored by the last."""
    with _limit_lock:
        if not _limit:
            _limit.append(_blas().limit(limits=1, user_api="blas"))
        _limit.append(None)
    try:
        yield
    finally:
        with _limit_lock:
            _limit.pop()
            if len(_limit) == 1:
                _limit.pop().restore_original_limits()


_loaded: dict[Path, DecoderWeights] = {}
_load_lock = threading.Lock()


def load_decoder(directory: Path) -> DecoderWeights:
    """The decoder of the CTranslate2 model in `directory` (its `model.bin`), read once per
    model (tiny.en's ~37 MB as float32, base's ~75 MB)."""
    with _load_lock:
        found = _loaded.get(directory)
        if found is None:
            found = DecoderWeights(read_decoder(directory / "model.bin"))
            _loaded[directory] = found
        return found


def _layer_norm(x: Array, norm: tuple[Array, Array]) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return np.asarray(centred / np.sqrt(variance + LAYER_NORM_EPS) * norm[0] + norm[1])


def _gelu(x: Array) -> Array:
    # The tanh form: within 1e-3 of the erf form CTranslate2 uses, far below int8's noise.
    return np.asarray(0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x))))


def _softmax(x: Array) -> Array:
    x = np.exp(x - x.max(axis=-1, keepdims=True))
    return np.asarray(x / x.sum(axis=-1, keepdims=True))


@dataclass(frozen=True)
class State:
    """A token sequence run through the decoder: the self-attention keys and values of every
    position, each layer, and the log-probabilities of the next token after each position."""

    keys: list[Array]
    values: list[Array]
    rows: Array
    """[positions, tokens]: log P(next token | the sequence up to each position), over the
    decoder's `tokens` only."""

    def __len__(self) -> int:
        return int(self.rows.shape[0])


class StepDecoder:
    """The decoder over one segment's encoded audio: a sequence run in one pass (`run`), then
    a token at a time on its cache (`step`)."""

    def __init__(
        self, weights: DecoderWeights, tokens: tuple[int, ...], encoded: npt.NDArray[Any]
    ) -> None:
        self.w = weights
        self.tokens = np.asarray(tokens, dtype=np.int64)
        """The tokens scored (the output layer's rows), in order."""
        self.vocabulary = int(self.tokens.max()) + 1 if len(tokens) else 0
        """The vocabulary a row spreads out to: up to the last token scored."""
        self._columns = np.full(self.vocabulary, -1, dtype=np.int64)
        self._columns[self.tokens] = np.arange(len(tokens))
        self.output = weights.output(tokens)
        audio = np.asarray(encoded, dtype=np.float32).reshape(-1, encoded.shape[-1])
        # The encoder's keys and values, once a segment (CTranslate2 does this every call).
        self.memory = []
        for layer in weights.layers:
            both = audio @ layer.memory[0] + layer.memory[1]
            keys, values = np.split(both, 2, axis=-1)
            self.memory.append((self._heads(keys), self._heads(values)))

    def column(self, token: int) -> int:
        """`token`'s column in a row (-1: not scored)."""
        return int(self._columns[token]) if 0 <= token < self.vocabulary else -1

    def _heads(self, x: Array) -> Array:
        """[positions, d] -> [heads, positions, d / heads]."""
        n = x.shape[0]
        return np.ascontiguousarray(x.reshape(n, self.w.heads, -1).transpose(1, 0, 2))

    def run(self, sequence: Sequence[int]) -> State:
        """`sequence` run in one pass (teacher forcing)."""
        return self._run(None, sequence)

    def step(self, state: State, token: int) -> State:
        """`state` one token on; its own cache is not changed (a path may branch from it)."""
        return self._run(state, [token])

    def _run(self, before: State | None, tokens: Sequence[int]) -> State:
        w = self.w
        n, at = len(tokens), 0 if before is None else len(before)
        x = w.embeddings[list(tokens)] + w.positions[at : at + n]
        keys_out, values_out = [], []
        mask = np.triu(np.full((n, at + n), -np.inf, dtype=np.float32), k=at + 1)
        scale = np.float32(1 / np.sqrt(x.shape[-1] // w.heads))
        for i, layer in enumerate(w.layers):
            h = _layer_norm(x, layer.norm1) @ layer.qkv[0] + layer.qkv[1]
            q, k, v = (self._heads(part) for part in np.split(h, 3, axis=-1))
            if before is not None:
                k = np.concatenate([before.keys[i], k], axis=1)
                v = np.concatenate([before.values[i], v], axis=1)
            keys_out.append(k)
            values_out.append(v)
            attended = _softmax((q @ k.transpose(0, 2, 1)) * scale + mask) @ v
            x = x + self._joined(attended) @ layer.out1[0] + layer.out1[1]
            q = self._heads(_layer_norm(x, layer.norm2) @ layer.query[0] + layer.query[1])
            mk, mv = self.memory[i]
            attended = _softmax((q @ mk.transpose(0, 2, 1)) * scale) @ mv
            x = x + self._joined(attended) @ layer.out2[0] + layer.out2[1]
            h = _gelu(_layer_norm(x, layer.norm3) @ layer.up[0] + layer.up[1])
            x = x + h @ layer.down[0] + layer.down[1]
        logits = _layer_norm(x, w.norm) @ self.output
        top = logits.max(axis=-1, keepdims=True)
        rows = logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
        if before is not None:
            rows = np.concatenate([before.rows, rows])
        return State(keys_out, values_out, np.asarray(rows, dtype=np.float32))

    @staticmethod
    def _joined(x: Array) -> Array:
        """[heads, positions, d / heads] -> [positions, d]."""
        heads, n, size = x.shape
        return np.ascontiguousarray(x.transpose(1, 0, 2).reshape(n, heads * size))
