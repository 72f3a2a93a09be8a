"""``ragingest query --max-context-tokens N``: the context an app's retriever hands the
generator (``HeadingFirstRetriever(max_context_tokens=N)``: passages best first, each whole,
within the budget), so an operator sees what the app gets, not the raw hits."""

from __future__ import annotations

import argparse
import json

from ragingest.cli.arg_groups import principals_of
from ragingest.cli.terminal import terminal_safe as safe


def context_command(args: argparse.Namespace) -> int:
    """Print the budgeted context for ``args.text`` (text or ``--json``); returns 0; a budget
    under 1 token is a ``ValueError`` saying so (exit 2)."""
    from ragingest.retrieval.heading_first import HeadingFirstRetriever

    if args.max_context_tokens < 1:
        raise ValueError(
            f"--max-context-tokens must be at least 1, not {args.max_context_tokens}: "
            "the budget of the context in the embedding model's tokens"
        )
    retriever = HeadingFirstRetriever(
        persist_dir=args.persist_dir, collection=args.collection, k=args.k,
        where=args.where or None, model=args.model, records_url=args.records_url,
        hybrid=args.hybrid, fusion=args.fusion, max_context_tokens=args.max_context_tokens,
        principals=principals_of(args),
    )  # fmt: skip
    context = retriever.context(args.text)
    chars = sum(len(doc.page_content) for doc in context.documents)
    if args.json:
        report = {
            "max_context_tokens": context.max_tokens,
            "tokens": context.tokens,
            "chars": chars,
            "passages": [
                {"text": doc.page_content, "metadata": doc.metadata} for doc in context.documents
            ],
            "left_out": len(context.skipped),
        }
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    print(
        f"context: {len(context.documents)} passages, {context.tokens} of "
        f"{context.max_tokens} tokens, {chars} characters; {len(context.skipped)} left out "
        "by the budget"
    )
    for rank, doc in enumerate(context.documents, 1):
        meta = doc.metadata
        print(
            f"\n{rank}. {safe(str(meta.get('source')))}  "
            f"[{safe(str(meta.get('section_path') or '-'))}]"
        )
        print("   " + safe(doc.page_content).replace("\n", "\n   "))
    if not context.documents:
        print("no context")
    return 0
