"""Text: words, tokens, stems, stopwords and month names, said once for recall, memory, conversation,
extraction and reasoning (a shared kernel: it imports nothing but the standard library)."""
