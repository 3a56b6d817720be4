"""Build the grounding world from its fixtures, write its marker, and verify it (S1.6-S1.8).

A world folder (``Grounding world ä``) holds one SQLite database per variant,
the background jobs' ``sources/`` and the marker ``.assistant_eval_world.json``.
The build is the only code that writes a world folder; everything else copies a
database out (``open_world``) or reads it read-only (``query``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import fixtures, runs, schema, store
from .clock import build_timestamp
from .content import content_of, fixture_file_hashes
from .errors import WorldExists, WorldRefused
from pytest_assistant_eval.records import fsync_dir, write_bytes_atomic

WORLD_DIR_NAME = "Grounding world ä"
MARKER_NAME = ".assistant_eval_world.json"
MARKER_KIND = "assistant_eval_world"
MARKER_FORMAT = 2
"""2: the fingerprint covers every database, source and variant file (format 1 covered only
the fixtures and run ids, so an edited database with its hash updated kept its fingerprint)."""
BASE = "base"


def database_relpath(variant: str) -> str:
    return "base.sqlite" if variant == BASE else f"variants/{variant}.sqlite"


@dataclass(frozen=True)
class WorldIdentity:
    """What a results folder records about the world it ran on."""

    fingerprint: str
    built_at: str
    databases: dict[str, str] = field(default_factory=dict)
    """Database path relative to the world folder -> sha256."""
    run_ids: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    format: int = MARKER_FORMAT
    #: The world by its content (``world/content.py``): one for every build of the same fixtures.
    content: str | None = None
    schema_format: Any = None
    #: Fixture file (relative path) -> sha256: what a refusal names when two worlds differ.
    fixture_files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "fingerprint": self.fingerprint,
            "built_at": self.built_at,
            "databases": dict(sorted(self.databases.items())),
            "run_ids": list(self.run_ids),
            "variants": list(self.variants),
            "content": self.content,
            "schema_format": self.schema_format,
            "fixture_files": dict(sorted(self.fixture_files.items())),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorldIdentity:
        return cls(
            fingerprint=data["fingerprint"], built_at=data["built_at"], databases=dict(data["databases"]),
            run_ids=tuple(data["run_ids"]), variants=tuple(data["variants"]), format=data.get("format", MARKER_FORMAT),
            content=data.get("content"), schema_format=data.get("schema_format"),
            fixture_files=dict(data.get("fixture_files") or {}),
        )


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def compute_fingerprint(
    built_at: str,
    fixtures_sha256: str,
    run_ids: list[str] | tuple[str, ...],
    databases: dict[str, str],
    sources: dict[str, str],
    variants: dict[str, str],
) -> str:
    """sha256 of everything a world is: its fixtures, its run ids, the hash of each database
    and source, and which database each variant reads (S1.7). ``verify_world`` computes it
    from the files on disk, so a record's fingerprint always names the bytes it ran on."""
    payload = json.dumps({
        "built_at": built_at, "fixtures_sha256": fixtures_sha256, "run_ids": sorted(run_ids), "databases": databases,
        "sources": sources, "variants": variants,
    }, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data: Any) -> None:
    write_bytes_atomic(path, (json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def _create_base(db_path: Path, sources: Path, source_dir: Path, built_at: str, digest: str) -> list[dict[str, Any]]:
    frame = fixtures.load_frame(source_dir)
    tables = fixtures.load_tables(source_dir)
    job = fixtures.load_runs(source_dir)
    conn = store.connect(db_path)
    try:
        conn.executescript(schema.create_sql())
        conn.execute("BEGIN")
        for table, rows in tables.items():
            for row in rows:
                store.insert_row(conn, table, row)
        meta = {
            "format": str(schema.FORMAT), "variant": BASE, "built_at": built_at, "now": str(frame["now"]),
            "owner": str(frame.get("owner", "")), "timezone": str(frame.get("timezone", "")),
            "fixtures_sha256": digest, "purpose": "the base world",
        }
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(meta.items()))
        store.reseed_counters(conn)
        # The background job for real: run the first source, rewrite it, run again.
        source = sources / job["source_file"]
        run_rows = []
        for spec in job["runs"]:
            runs.write_source(source, list(job["columns"]), [[str(c) for c in r] for r in spec["rows"]])
            run_rows.append(runs.run_payments_batch(
                conn, source, columns=list(job["columns"]),
                started_at=str(spec["started_at"]), ended_at=str(spec["ended_at"]),
            ))
        conn.execute("COMMIT")
    finally:
        conn.close()
    return run_rows


def build_world(out_dir: Path, source_dir: Path | None = None, *, replace: bool = False) -> Path:
    """Build ``out_dir / "Grounding world ä"`` and return its path."""
    out_dir = Path(out_dir)
    source_dir = Path(source_dir) if source_dir is not None else fixtures.default_source_dir()
    final = out_dir / WORLD_DIR_NAME
    if final.exists() and not replace:
        raise WorldExists(
            f"A world already exists at {final}. Building again makes a new build (new build time, new run "
            f"ids), so a half-finished results folder of the old one could no longer be resumed on it (finished "
            f"folders of both builds of the same fixtures still grade and compare together). "
            f"Pass --replace to build over it, or choose another --out folder."
        )
    if final.exists() and not (final / MARKER_NAME).is_file() and any(final.iterdir()):
        # --replace deletes the old folder: never do that to something we did not build
        raise WorldExists(
            f"{final} exists but has no marker {MARKER_NAME}, so it is not a world this harness built; "
            f"it is left alone even with --replace. Move it away or choose another --out folder."
        )
    variants = fixtures.load_variants(source_dir)  # check overrides before doing any work
    digest = fixtures.fixtures_digest(source_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{WORLD_DIR_NAME}.building-{uuid.uuid4().hex}"
    tmp.mkdir()
    try:
        built_at = build_timestamp()
        (tmp / "sources").mkdir()
        (tmp / "variants").mkdir()
        base_path = tmp / database_relpath(BASE)
        run_rows = _create_base(base_path, tmp / "sources", source_dir, built_at, digest)
        for name, variant in variants.items():
            path = tmp / database_relpath(name)
            shutil.copyfile(base_path, path)
            conn = store.connect(path)
            try:
                conn.execute("BEGIN")
                fixtures.apply_changes(conn, variant["changes"], f"{source_dir / 'variants' / (name + '.yaml')}")
                store.reseed_counters(conn)
                conn.execute("UPDATE meta SET value = ? WHERE key = 'variant'", (name,))
                conn.execute("UPDATE meta SET value = ? WHERE key = 'purpose'", (variant["purpose"],))
                conn.execute("COMMIT")
            finally:
                conn.close()
        databases: dict[str, str] = {}
        for name in [BASE, *variants]:
            path = tmp / database_relpath(name)
            _fsync_file(path)
            databases[database_relpath(name)] = sha256_file(path)
        source_hashes = {}
        for path in sorted((tmp / "sources").iterdir()):
            _fsync_file(path)
            source_hashes[path.name] = sha256_file(path)
        run_ids = [r["id"] for r in run_rows]
        variant_files = {name: database_relpath(name) for name in [BASE, *variants]}
        marker = {
            "kind": MARKER_KIND,
            "format": MARKER_FORMAT,
            "schema_format": schema.FORMAT,
            "built_at": built_at,
            "fixtures_sha256": digest,
            "databases": databases,
            "variants": {name: {"database": database_relpath(name), "purpose": v["purpose"]}
                         for name, v in {BASE: {"purpose": "the base world"}, **variants}.items()},
            "sources": source_hashes,
            "runs": [{"id": r["id"], "kind": r["kind"], "status": r["status"], "started_at": r["started_at"],
                      "source_sha256": r["source_sha256"]} for r in run_rows],
            "run_ids": run_ids,
            "fingerprint": compute_fingerprint(built_at, digest, run_ids, databases, source_hashes, variant_files),
            # The world by its content (issue 29): the same for every build of these fixtures.
            "content": content_of(digest, schema.FORMAT, MARKER_FORMAT),
            "fixture_files": fixture_file_hashes(source_dir),
        }
        write_json_atomic(tmp / MARKER_NAME, marker)
        fsync_dir(tmp)
        if final.exists():
            trash = out_dir / f".{WORLD_DIR_NAME}.old-{uuid.uuid4().hex}"
            os.replace(final, trash)
            os.replace(tmp, final)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(tmp, final)
        fsync_dir(out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _refuse(world_dir: Path, problems: list[str]) -> WorldRefused:
    return WorldRefused(
        f"Refusing the world at {world_dir}: " + "; ".join(problems) + ". "
        "Only a world made by `assistant-eval build` and left unchanged since may be used, so that data "
        "from a real user's world never reaches a model; a results folder made on one build is resumed only "
        "on that build (builds of the same fixtures grade and compare together). Build a fresh world with "
        "`assistant-eval build --out DIR` (add --replace to build over this one)."
    )


def read_marker(world_dir: Path) -> dict[str, Any]:
    world_dir = Path(world_dir)
    path = world_dir / MARKER_NAME
    if not path.is_file():
        raise _refuse(world_dir, [f"it has no marker {MARKER_NAME}, so it is not a world this harness built"])
    try:
        marker = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _refuse(world_dir, [f"its marker {MARKER_NAME} cannot be read ({exc})"]) from None
    if not isinstance(marker, dict) or marker.get("kind") != MARKER_KIND:
        raise _refuse(world_dir, [f"its marker {MARKER_NAME} is not a world marker"])
    if marker.get("format") != MARKER_FORMAT:
        raise _refuse(world_dir, [f"its marker has format {marker.get('format')!r}, this harness reads format {MARKER_FORMAT}"])
    missing = [k for k in ("built_at", "fixtures_sha256", "databases", "variants", "sources", "run_ids", "runs", "fingerprint")
               if k not in marker]
    if missing:
        raise _refuse(world_dir, [f"its marker lacks {', '.join(missing)}"])
    return marker


def verify_world(world_dir: Path, source_dir: Path | None = None) -> WorldIdentity:
    """Check a world folder against its marker; return its identity or raise WorldRefused."""
    world_dir = Path(world_dir)
    marker = read_marker(world_dir)
    problems: list[str] = []
    databases: dict[str, str] = marker["databases"]
    on_disk: dict[str, str] = {}  # what the fingerprint is computed from: the files, not the marker's word
    for rel, expected in sorted(databases.items()):
        path = world_dir / rel
        if not path.is_file():
            problems.append(f"database {rel} is missing")
            continue
        on_disk[rel] = sha256_file(path)
        if on_disk[rel] != expected:
            problems.append(f"database {rel} changed since it was built (its sha256 differs from the marker's)")
    present = {p.relative_to(world_dir).as_posix() for p in world_dir.rglob("*.sqlite")}
    for rel in sorted(present - set(databases)):
        problems.append(f"database {rel} is not one the build made")
    sources_dir = world_dir / "sources"
    found = {p.name: sha256_file(p) for p in sorted(sources_dir.iterdir()) if p.is_file()} if sources_dir.is_dir() else {}
    for name, expected in sorted(marker["sources"].items()):
        if name not in found:
            problems.append(f"source sources/{name} is missing")
        elif found[name] != expected:
            problems.append(f"source sources/{name} changed since the build")
    for name in sorted(set(found) - set(marker["sources"])):
        problems.append(f"source sources/{name} is not one the build wrote")
    run_ids = list(marker["run_ids"])
    statuses = {r.get("status") for r in marker["runs"] if isinstance(r, dict)}
    if not run_ids or not {"succeeded", "failed"} <= statuses:
        problems.append("it was built without its background runs (a succeeded and a failed payments_batch run)")
    variant_files = {name: v.get("database") if isinstance(v, dict) else None for name, v in marker["variants"].items()}
    for name, rel in sorted(variant_files.items()):
        if rel not in databases:
            problems.append(f"variant {name} reads {rel!r}, not one of the marker's databases")
    fingerprint = compute_fingerprint(marker["built_at"], marker["fixtures_sha256"], run_ids, on_disk, found, variant_files)
    if fingerprint != marker["fingerprint"]:
        problems.append("the marker's fingerprint does not match the world's databases, sources, fixtures and run ids")
    for rel in sorted(databases):
        path = world_dir / rel
        if not path.is_file():
            continue
        try:
            conn = store.connect_readonly(path)
            try:
                in_db = [r[0] for r in conn.execute("SELECT id FROM runs ORDER BY started_at, id")]
            finally:
                conn.close()
        except sqlite3.Error as exc:
            problems.append(f"database {rel} cannot be read ({exc})")
            continue
        for rid in in_db:
            if rid not in run_ids:
                problems.append(f"run {rid} in {rel} is not one of the build's runs (another run, or a run made again)")
        for rid in run_ids:
            if rid not in in_db:
                problems.append(f"run {rid} of the build is missing from {rel}")
    if source_dir is not None:
        digest = fixtures.fixtures_digest(Path(source_dir))
        if digest != marker["fixtures_sha256"]:
            problems.append(f"the fixture sources in {source_dir} changed since the build (fixtures or overrides differ)")
    if problems:
        raise _refuse(world_dir, problems)
    files = marker.get("fixture_files") if isinstance(marker.get("fixture_files"), dict) else {}
    return WorldIdentity(
        fingerprint=fingerprint, built_at=marker["built_at"], databases=on_disk,
        run_ids=tuple(run_ids), variants=tuple(marker["variants"]),
        # computed, never read from the marker: the fingerprint covers the fixtures' digest it is made of
        content=content_of(marker["fixtures_sha256"], marker.get("schema_format"), MARKER_FORMAT),
        schema_format=marker.get("schema_format"), fixture_files=dict(files),
    )


def list_variants(world_dir: Path) -> list[str]:
    """Variant names of a built world, ``base`` first."""
    marker = read_marker(Path(world_dir))
    names = [n for n in marker["variants"] if n != BASE]
    return [BASE, *sorted(names)]


def database_path(world_dir: Path, variant: str) -> Path:
    marker = read_marker(Path(world_dir))
    if variant not in marker["variants"]:
        raise KeyError(f"World {world_dir} has no variant {variant!r}; it has: {', '.join(list_variants(world_dir))}.")
    return Path(world_dir) / marker["variants"][variant]["database"]


def copy_database(world_dir: Path, variant: str, target: Path) -> str:
    """Copy a variant's database to ``target`` and check the copy against the marker: the
    world was verified when the run started, and a record's fingerprint must name the bytes
    its cell really ran on, also when the file was changed since. Returns the copy's sha256."""
    world_dir = Path(world_dir)
    marker = read_marker(world_dir)
    source = database_path(world_dir, variant)
    rel = source.relative_to(world_dir).as_posix()
    shutil.copyfile(source, target)
    if sha256_file(target) != marker["databases"].get(rel):
        target.unlink()
        raise _refuse(world_dir, [f"database {rel} changed since it was built (its sha256 differs from the marker's)"])
    return str(marker["databases"][rel])


def query(world_dir: Path, variant: str, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
    """Run one read-only SQL query on a variant's database (answer-key derivations)."""
    conn = store.connect_readonly(database_path(world_dir, variant))
    try:
        return [tuple(r) for r in conn.execute(sql, params).fetchall()]
    finally:
        conn.close()
