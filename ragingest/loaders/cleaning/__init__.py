"""Cleaning before chunking, each removal justified, bounded and counted: the per-file rules
(``rules``: running headers and footers, page numbers, tables of contents, quotes, signatures;
``CleaningRules`` switches each), and across the documents of one run copies and boilerplate
(``corpus``, over ``markdown_blocks``, near copies found by character ``shingles``), removed
with every coordinate moved (``removal``)."""
