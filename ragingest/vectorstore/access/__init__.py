"""Who may read what: principals and the access filter (``principals``), writing readers in
place (``write``), the one place reads are limited to them (``guarded``, with the lexical index
and parents in ``guarded_indexes``) and the kept sets of readable ids (``readable_ids``)."""
