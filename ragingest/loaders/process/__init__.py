"""Parsing a file in a worker process, bounded in time and memory: the pool that runs files and
kills a worker past its bound (``bounded.ParserPool``), the worker process itself
(``worker_process``, started by ``subprocess``) and its ``python -m`` entry point
(``parse_worker``), the process tree under it (``process_tree``: resident memory, killing the
group) and progress reported from inside a parse (``progress``)."""
