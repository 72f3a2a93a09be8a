"""``ragingest.ingest``: the command line (``cli``)."""
