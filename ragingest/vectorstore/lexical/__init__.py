"""The lexical (BM25) index beside the dense store: the SQLite FTS5 index (``index``), its
PostgreSQL twin (``pg``), where each lives (``location``), the query terms (``terms``), the
search over it (``search``) and its cache of term statistics (``cache``)."""
