"""Hybrid recall: embedder, FAISS sidecar, BM25, fusion with decay and importance, Markdown index, fallback."""
