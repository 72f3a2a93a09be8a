"""The normalized Markdown every loader hands on, and its coordinates: ``blocks`` (the one shape
rich formats render through, with its page map), ``source_map`` (offsets back into the file as
decoded; a document's chunks moved into them: ``source_offsets``), ``front_matter`` (a leading
YAML block → metadata, on every path), ``plain_headings`` (headings of plain text rewritten as
``#`` lines), and any LangChain loader's pages and elements joined into one normalized document
(``pages``; a page's lines into paragraphs: ``page_lines``)."""
