"""The SQL side of a collection: the records database (``database``: SQLite beside Chroma or
PostgreSQL, ``location``), LangChain's record manager over it (``record_manager``,
``langchain_sql``), the alias table (``aliases``), the key-value stores (``kv``,
``sqlite_local``) that hold the parent sections (``parents``), and which documents ragingest
wrote (``origins``)."""
