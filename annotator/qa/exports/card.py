"""The dataset card (README.md with the Hugging Face ``datasets`` YAML header) of a JSONL or Parquet
export folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

from annotator.projects.models import Project
from annotator.qa.exports.rows import Filters
from annotator.qa.exports.schema import row_schema

CARD_MARK = "<!-- written by annotator export_qa -->"


def _yaml_feature(name: str | None, typ) -> dict:
    """A ``datasets`` YAML feature (dataset_info.features) for a pyarrow type: ``dtype`` for
    scalars, ``struct`` for structs and ``list`` for lists (read by datasets 2.x and current)."""
    import pyarrow as pa

    out: dict = {"name": name} if name is not None else {}
    if pa.types.is_struct(typ):
        out["struct"] = [_yaml_feature(typ.field(i).name, typ.field(i).type) for i in range(typ.num_fields)]
    elif pa.types.is_list(typ):
        inner = _yaml_feature(None, typ.value_type)
        out["list"] = inner["dtype"] if set(inner) == {"dtype"} else inner.get("struct", inner)
    else:
        out["dtype"] = {"int64": "int64", "double": "float64", "string": "string", "bool": "bool"}[str(typ)]
    return out


DATA_PATTERNS = {"jsonl": "*.jsonl", "parquet": "data/*.parquet"}


def data_fingerprint(folder: Path, pattern: str) -> str:
    """16 hex of a sha256 over the data files of an export folder that ``pattern`` matches (sorted by
    name): each file's relative path and its content's sha256. Reads every matching file once."""
    outer = hashlib.sha256()
    for path in sorted(folder.glob(pattern)):
        if not path.is_file():
            continue
        inner = hashlib.sha256()
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                inner.update(block)
        outer.update(f"{path.relative_to(folder).as_posix()}\0{inner.hexdigest()}\n".encode())
    return outer.hexdigest()[:16]


def dataset_card(project: Project, fmt: str, filters: Filters, rows: int, folder: Path) -> str:
    """README.md for an export folder: the Hugging Face ``datasets`` YAML header, then what the export
    holds. The header has one config whose ``test`` split is every ``*.jsonl`` of the folder (JSONL)
    or every ``data/*.parquet`` (Parquet, the Hub layout), the features of ``row_schema()`` (so every
    file of the folder loads under the same types, empty lists included), and a config name carrying
    the data's content hash (``qa-<data_fingerprint>``): ``datasets`` caches a folder's config by its
    name alone, so a re-export under the old name would be served the old rows from its cache."""
    import yaml

    schema = row_schema()
    pattern = DATA_PATTERNS[fmt]
    name = f"qa-{data_fingerprint(folder, pattern)}"
    header = {
        "configs": [{"config_name": name, "data_files": [{"split": "test", "path": pattern}]}],
        "dataset_info": {"config_name": name, "features": [_yaml_feature(f.name, f.type) for f in schema]},
        "tags": ["video-question-answering"],
    }
    chosen = ", ".join(f"{k}={v}" for k, v in vars(filters).items() if v) or "none"
    return (
        "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n" + CARD_MARK + "\n\n"
        f"# {project.name}: verified QA pairs\n\n"
        f"Verified QA pairs of the project `{project.slug}` ({rows} in the last export written here; filters: {chosen}).\n"
        f"Every row has every key, always of the same type and never null: absent numbers are -1 (`answer_index` "
        f'of an open-ended item, `answer_start_s`/`answer_end_s` of a non-interval item), absent text is "", and '
        f"free-form metadata is one JSON string (`video.metadata`, `group.params`).\n\n"
        f'The fields are documented in the platform\'s docs/exports.md ("Export schema"). Load with '
        f'`datasets.load_dataset("path/to/this/folder", split="test")`; every `{pattern}` here is part of it, '
        f"typed by the features above.\n"
    )


def write_card(folder: Path, text: str) -> Path | None:
    """Write README.md into ``folder`` unless a README.md not written by an export is there."""
    card = folder / "README.md"
    if card.exists() and CARD_MARK not in card.read_text(errors="replace"):
        return None
    card.write_text(text)
    return card
