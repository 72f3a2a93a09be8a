"""The store port in this process's memory, exact: ``MemoryIndex`` (a ``port.DenseIndex``) and
``MemoryBackend`` (a ``port.Backend``), registered as ``"memory"`` in ``backends.BUILT_IN``.

It is the port's second implementation and its proof: this folder and that one registry entry
are everything it adds, exactly what a third party's backend would add (its entry in the
``ragingest.backends`` entry point group instead). Nothing persists past the process."""
