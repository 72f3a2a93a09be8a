"""What a collection records about how it was built, whatever the store: the metadata keys,
the model's identity, and the guard that refuses a run of another model or other splitter
settings (``CollectionMismatchError`` saying what differs and what to do)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragingest.errors import CollectionMismatchError
from ragingest.models.locate import canonical_name, model_fingerprint, resolve_model_path

MODEL_KEY = "ragingest_model"
FINGERPRINT_KEY = "ragingest_fingerprint"
SETTINGS_KEY = "ragingest_settings"
ALIAS_KEY = "ragingest_alias"  # on a rebuilt physical collection: the name it serves
# set (True) on a collection written under an access policy: its reads must name principals
ACCESS_POLICY_KEY = "ragingest_access_policy"
# in the recorded settings of such a collection: a run with or without a policy differs
POLICY_SETTING = "access_policy"



def missing_collection(collection: str, persist_dir: object) -> CollectionMismatchError:
    """The error for a collection that does not exist (it says to run ``ragingest ingest``)."""
    return CollectionMismatchError(
        f"collection {collection!r} does not exist in {persist_dir}; run `ragingest ingest` first"
    )


def model_identity(model: str | None = None) -> tuple[str, str]:
    """``(name, fingerprint)`` of a model without loading its tokenizer or weights (the same
    values as ``load_model_info``), so a run with nothing to embed never loads the model."""
    name = canonical_name(model)
    folder = Path(resolve_model_path(name))
    return name, model_fingerprint(name, folder) if folder.is_dir() else name


def embeddings_identity(embeddings: Any) -> tuple[str, str]:
    """``(name, fingerprint)`` of ``SentenceTransformerEmbeddings`` or of an object carrying
    ``model_name`` and ``fingerprint`` (the run's cached embeddings)."""
    if hasattr(embeddings, "fingerprint"):
        return embeddings.model_name, embeddings.fingerprint
    info = embeddings.info
    return info.name, info.fingerprint


def store_metadata(
    model: str, fingerprint: str, settings: dict[str, Any] | None, alias: str | None = None
) -> dict[str, Any]:
    """The collection metadata recording the model, its fingerprint, the split settings and the
    alias; a backend adds its own index settings when it creates the collection."""
    metadata: dict[str, Any] = {
        MODEL_KEY: model,
        FINGERPRINT_KEY: fingerprint,
        SETTINGS_KEY: json.dumps(settings or {}, sort_keys=True),
    }
    if alias:
        metadata[ALIAS_KEY] = alias
    if (settings or {}).get(POLICY_SETTING):
        metadata[ACCESS_POLICY_KEY] = True
    return metadata


def mismatch(
    existing: dict[str, Any],
    collection: str,
    model: str,
    fingerprint: str,
    settings: dict[str, Any] | None,
) -> str | None:
    """Why a collection with metadata ``existing`` can't take this model/settings, or None.

    A writer (``settings`` given) is refused a collection that records no model: other code
    made it (LangChain's ``Chroma``/``index()``), so neither the model of its vectors nor the
    splitting of its documents is known, and a run could not tell when settings change."""
    recorded_model = existing.get(MODEL_KEY)
    if settings is not None and not recorded_model:
        return (
            f"collection {collection!r} was not built by ragingest: it records no model or "
            "splitter settings (other code made it, e.g. LangChain's Chroma and index()), so "
            "ragingest can't tell how its documents were embedded or split. Use another "
            "--collection, or `ingest --rebuild` to build it anew from PATH (its present "
            "documents are not carried over)"
        )
    if recorded_model and (recorded_model != model or existing.get(FINGERPRINT_KEY) != fingerprint):
        return (
            f"collection {collection!r} was built with model {recorded_model!r} "
            f"(fingerprint {existing.get(FINGERPRINT_KEY)}), not {model!r} ({fingerprint}); "
            "vectors of two models can't be compared. Use the same --model, another "
            "--collection, or `ingest --rebuild` to rebuild it"
        )
    recorded_settings = existing.get(SETTINGS_KEY)
    if settings is not None and recorded_settings:
        old = json.loads(recorded_settings)
        if old and bool(old.get(POLICY_SETTING)) != bool(settings.get(POLICY_SETTING)):
            return _policy_mismatch(collection, bool(old.get(POLICY_SETTING)))
        if old and old != settings:
            changed = sorted(k for k in set(old) | set(settings) if old.get(k) != settings.get(k))
            from ragingest.splitters.settings_text import effective_setting

            diff = ", ".join(
                f"{k}: {effective_setting(k, old.get(k), old)} -> "
                f"{effective_setting(k, settings.get(k), settings)}"
                for k in changed
            )
            return (
                f"collection {collection!r} was built with other splitter settings ({diff}); "
                "mixing them leaves chunks of two kinds. Use the recorded settings, another "
                "--collection, or `ingest --rebuild` to rebuild it"
            )
    return None


def _policy_mismatch(collection: str, recorded: bool) -> str:
    if recorded:
        return (
            f"collection {collection!r} has an access policy and this run gives none: give "
            "the operator's config with its [[access]] rules and [access_policy] (--config "
            "FILE); a policy is never dropped from a collection"
        )
    return (
        f"collection {collection!r} was built without an access policy (every reader sees "
        "every chunk) and this run gives one: `ingest --rebuild` builds it anew under the "
        "policy (vectors come from the embedding cache), or use another --collection"
    )


def check_compatible(
    existing: dict[str, Any],
    collection: str,
    model: str,
    fingerprint: str,
    settings: dict[str, Any] | None,
) -> None:
    """Raise ``CollectionMismatchError`` unless ``existing`` was built with this model,
    fingerprint and settings."""
    problem = mismatch(existing, collection, model, fingerprint, settings)
    if problem:
        raise CollectionMismatchError(problem)
