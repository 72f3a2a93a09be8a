"""What a run is given, before any parser: the file walk (``walk``: regular files only, every
other entry a ``SkippedFile`` with its reason), each file's ``source`` key and printable name
(``source_keys``), the identity the walk checked so the read opens the same file
(``identity``), and LangChain loaders or ``Document``s turned into typed work (``source_items``
sorts what ingest was given; ``sources``: a ``DocumentSource`` gives ``SourceTask``s)."""
