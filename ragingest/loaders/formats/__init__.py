"""One module per family of formats, each a ``FileLoader``: Markdown and plain text (``text``,
decoding repaired by ``repair``), tables (``tabular``, rows as records: ``records``), PDF
(``pdf``, its lines and headings: ``pdf_lines``, ``pdf_headings``), office documents
(``office``, ``office_xml``), EPUB (``ebook``), HTML (``web``, ``html_depth``) and e-mail
(``mail``); the base of the rich formats (``rich``: parse to blocks, clean, render),
unstructured set up offline (``partition``) and the zip bomb check of containers (``archives``)."""
