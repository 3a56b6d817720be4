"""The world build, its marker and the refusals of verify_world (S1.6-S1.8)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from pytest_assistant_eval.suites.calibration.world import (
    MARKER_NAME,
    WORLD_DIR_NAME,
    WorldExists,
    WorldIdentity,
    WorldRefused,
    build_world,
    list_variants,
    query,
    read_marker,
    verify_world,
)
from pytest_assistant_eval.suites.calibration.world.fixtures import default_source_dir

SOURCES = default_source_dir()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_world(tmp_path_factory.mktemp("out"))


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """A fresh world this test may damage."""
    return build_world(tmp_path)


def test_the_world_folder_name_has_a_space_and_a_non_ascii_letter(built: Path) -> None:
    assert built.name == WORLD_DIR_NAME == "Grounding world ä"
    assert (built / "base.sqlite").is_file() and (built / MARKER_NAME).is_file()


def test_a_fresh_build_verifies_against_its_fixture_sources(built: Path) -> None:
    identity = verify_world(built, SOURCES)
    assert isinstance(identity, WorldIdentity)
    assert identity.variants[0] == "base" and len(identity.variants) >= 6
    assert set(identity.databases) == {"base.sqlite", *(f"variants/{v}.sqlite" for v in identity.variants[1:])}
    assert len(identity.run_ids) == 2
    assert json.loads(json.dumps(identity.to_dict())) == identity.to_dict()
    assert WorldIdentity.from_dict(identity.to_dict()) == identity


def test_list_variants_puts_base_first(built: Path) -> None:
    names = list_variants(built)
    assert names[0] == "base"
    assert {"price_rise", "card_blocked", "meeting_moved", "contact_moved", "sold_out"} <= set(names)


def test_the_build_takes_well_under_a_few_seconds(tmp_path: Path) -> None:
    t = time.perf_counter()
    build_world(tmp_path)
    assert time.perf_counter() - t < 3.0


def test_two_builds_are_never_the_same_world(built: Path, tmp_path: Path) -> None:
    first = verify_world(built)
    second = verify_world(build_world(tmp_path))
    assert first.fingerprint != second.fingerprint
    assert first.built_at != second.built_at
    assert set(first.run_ids).isdisjoint(second.run_ids)
    for name, digest in first.databases.items():
        assert second.databases[name] != digest


def test_the_marker_records_format_hashes_runs_and_fingerprint(built: Path) -> None:
    marker = read_marker(built)
    assert marker["format"] == 2 and marker["kind"] == "assistant_eval_world"
    assert {r["status"] for r in marker["runs"]} == {"succeeded", "failed"}
    assert set(marker["sources"]) == {"scheduled_payments.csv"}
    assert all(len(h) == 64 for h in marker["databases"].values())


def test_an_existing_world_is_refused_unless_replace(built: Path) -> None:
    with pytest.raises(WorldExists, match="already exists.*--replace"):
        build_world(built.parent)


def test_replace_builds_a_new_world_in_place(world: Path) -> None:
    before = verify_world(world)
    again = build_world(world.parent, replace=True)
    assert again == world
    assert verify_world(world).fingerprint != before.fingerprint
    assert [p.name for p in world.parent.iterdir()] == [WORLD_DIR_NAME]


def test_replace_never_deletes_a_folder_it_did_not_build(tmp_path: Path) -> None:
    foreign = tmp_path / WORLD_DIR_NAME
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(WorldExists, match="not a world this harness built"):
        build_world(tmp_path, replace=True)
    assert (foreign / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_a_world_without_marker_is_refused(world: Path) -> None:
    (world / MARKER_NAME).unlink()
    with pytest.raises(WorldRefused, match="no marker"):
        verify_world(world)


def test_an_unreadable_marker_is_refused(world: Path) -> None:
    (world / MARKER_NAME).write_text("{not json", encoding="utf-8")
    with pytest.raises(WorldRefused, match="cannot be read"):
        verify_world(world)


def test_a_marker_of_another_format_is_refused(world: Path) -> None:
    marker = json.loads((world / MARKER_NAME).read_text(encoding="utf-8"))
    marker["format"] = 99
    (world / MARKER_NAME).write_text(json.dumps(marker), encoding="utf-8")
    with pytest.raises(WorldRefused, match="format 99"):
        verify_world(world)


def test_a_changed_row_is_refused_naming_the_database(world: Path) -> None:
    db = world / "variants" / "price_rise.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE listings SET price_amount = 50 WHERE id = 'L-103'")
    conn.commit()
    conn.close()
    with pytest.raises(WorldRefused) as info:
        verify_world(world)
    assert "variants/price_rise.sqlite changed" in info.value.message
    assert "base.sqlite" not in info.value.message
    assert "\n" not in info.value.message


def test_a_rerun_run_is_refused_naming_the_run(world: Path) -> None:
    old = verify_world(world).run_ids[1]
    conn = sqlite3.connect(world / "base.sqlite")
    conn.execute("UPDATE runs SET id = 'aaaaaaaa-0000-4000-8000-000000000000' WHERE id = ?", (old,))
    conn.commit()
    conn.close()
    with pytest.raises(WorldRefused) as info:
        verify_world(world)
    message = info.value.message
    assert "run aaaaaaaa-0000-4000-8000-000000000000 in base.sqlite is not one of the build's runs" in message
    assert f"run {old} of the build is missing from base.sqlite" in message


def test_a_rewritten_source_is_refused(world: Path) -> None:
    src = world / "sources" / "scheduled_payments.csv"
    src.write_text(src.read_text(encoding="utf-8") + "pay-9999,card-visa-4821,X,1.00,2026-03-16,x\n", encoding="utf-8")
    with pytest.raises(WorldRefused, match="sources/scheduled_payments.csv changed"):
        verify_world(world)


def test_changed_fixture_sources_are_refused(built: Path, tmp_path: Path) -> None:
    copy = tmp_path / "fixtures"
    shutil.copytree(SOURCES, copy)
    path = copy / "variants" / "price_rise.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("118.0", "119.0"), encoding="utf-8")
    with pytest.raises(WorldRefused, match="fixture sources .* changed"):
        verify_world(built, copy)


def test_a_world_built_without_its_runs_is_refused(world: Path) -> None:
    marker_path = world / MARKER_NAME
    marker = json.loads(marker_path.read_text(encoding="utf-8"))
    marker["runs"], marker["run_ids"] = [], []
    marker_path.write_text(json.dumps(marker), encoding="utf-8")
    with pytest.raises(WorldRefused, match="without its background runs"):
        verify_world(world)


def test_an_extra_database_is_refused(world: Path) -> None:
    shutil.copyfile(world / "base.sqlite", world / "variants" / "mine.sqlite")
    with pytest.raises(WorldRefused, match="variants/mine.sqlite is not one the build made"):
        verify_world(world)


def test_the_background_runs_succeeded_then_failed_its_input_checks(built: Path) -> None:
    rows = query(built, "base", "SELECT status, input_checks, rows_applied, error_log, source_sha256 FROM runs ORDER BY started_at")
    (ok_status, ok_checks, ok_applied, ok_log, ok_hash), (bad_status, bad_checks, bad_applied, bad_log, bad_hash) = rows
    assert (ok_status, ok_applied, ok_log) == ("succeeded", 3, "")
    assert all(c["passed"] for c in json.loads(ok_checks))
    assert (bad_status, bad_applied) == ("failed", 0)
    failed = {c["name"] for c in json.loads(bad_checks) if not c["passed"]}
    assert failed == {"amounts_positive", "cards_known"}
    assert "card-visa-4812" in bad_log and "-45.00" in bad_log
    assert ok_hash != bad_hash  # the source was rewritten between the runs
    marker = read_marker(built)
    assert marker["sources"]["scheduled_payments.csv"] == bad_hash


def test_only_the_successful_run_applied_charges(built: Path) -> None:
    run_ids = [r[0] for r in query(built, "base", "SELECT id FROM runs ORDER BY started_at")]
    charges = query(built, "base", "SELECT run, amount FROM charges WHERE run IS NOT NULL")
    assert {r for r, _ in charges} == {run_ids[0]}
    assert sorted(a for _, a in charges) == [45.0, 66.41, 240.0]
    assert query(built, "base", "SELECT balance_eur FROM cards WHERE id = 'card-visa-4821'") == [(940.91,)]


def test_query_is_read_only(built: Path) -> None:
    with pytest.raises(sqlite3.OperationalError):
        query(built, "base", "DELETE FROM contacts")
    verify_world(built)


def test_each_variant_changes_what_its_yaml_says(built: Path) -> None:
    assert query(built, "price_rise", "SELECT price_amount FROM listings WHERE id='L-103'") == [(118.0,)]
    assert query(built, "card_blocked", "SELECT blocked FROM cards WHERE id='card-visa-4821'") == [(1,)]
    assert query(built, "meeting_moved", "SELECT start FROM events WHERE id='e-0002'") == [("2026-03-20T15:00:00+00:00",)]
    assert query(built, "contact_moved", "SELECT city FROM contacts WHERE id='c-helena'") == [("Porto",)]
    assert query(built, "sold_out", "SELECT available_from FROM listings WHERE id='L-103'") == [("2026-04-10",)]
    assert query(built, "card_renewed", "SELECT expiry FROM cards WHERE id='card-mc-0932'") == [("2029-02",)]
    assert query(built, "base", "SELECT value FROM meta WHERE key='variant'") == [("base",)]
    assert query(built, "sold_out", "SELECT value FROM meta WHERE key='variant'") == [("sold_out",)]
    # a variant that inserts a message moves the counter past it
    assert query(built, "meeting_moved", "SELECT next FROM counters WHERE name='messages'") == [(17,)]


def test_a_malformed_override_is_reported_with_its_file(tmp_path: Path) -> None:
    from pytest_assistant_eval.suites.calibration.world import FixtureError

    copy = tmp_path / "fixtures"
    shutil.copytree(SOURCES, copy)
    (copy / "variants" / "broken.yaml").write_text(
        "purpose: x\nchanges:\n  - {table: listings, key: L-999, set: {price_amount: 1}}\n", encoding="utf-8")
    with pytest.raises(FixtureError, match=r"broken\.yaml.*L-999"):
        build_world(tmp_path / "out", copy)
    assert not (tmp_path / "out" / WORLD_DIR_NAME).exists()
    assert list((tmp_path / "out").iterdir()) == []


def _retamper(world: Path, rel: str, sql: str) -> None:
    """Change a database and write its new hash into the marker, as a careful forger would."""
    from pytest_assistant_eval.suites.calibration.world.build import sha256_file

    conn = sqlite3.connect(world / rel)
    conn.execute(sql)
    conn.commit()
    conn.close()
    marker = json.loads((world / MARKER_NAME).read_text(encoding="utf-8"))
    marker["databases"][rel] = sha256_file(world / rel)
    (world / MARKER_NAME).write_text(json.dumps(marker), encoding="utf-8")


def test_an_edited_database_with_its_hash_updated_in_the_marker_is_refused(world: Path) -> None:
    _retamper(world, "base.sqlite", "UPDATE listings SET distance_km = 3.5 WHERE id = 'L-101'")
    with pytest.raises(WorldRefused, match="fingerprint does not match the world's databases"):
        verify_world(world)


def test_a_forged_fingerprint_is_not_the_records_fingerprint(world: Path) -> None:
    """Even a marker whose fingerprint was recomputed cannot pass as the world it was: the
    identity a record carries is computed from the files, so it differs from the build's."""
    from pytest_assistant_eval.suites.calibration.world.build import compute_fingerprint

    true = verify_world(world).fingerprint
    _retamper(world, "base.sqlite", "UPDATE cards SET limit_eur = 99999 WHERE id = 'card-visa-4821'")
    marker = json.loads((world / MARKER_NAME).read_text(encoding="utf-8"))
    marker["fingerprint"] = compute_fingerprint(
        marker["built_at"], marker["fixtures_sha256"], marker["run_ids"], marker["databases"], marker["sources"],
        {n: v["database"] for n, v in marker["variants"].items()})
    (world / MARKER_NAME).write_text(json.dumps(marker), encoding="utf-8")
    assert verify_world(world).fingerprint != true


def test_a_variant_pointed_at_another_database_is_refused(world: Path) -> None:
    marker = json.loads((world / MARKER_NAME).read_text(encoding="utf-8"))
    marker["variants"]["price_rise"]["database"] = "base.sqlite"
    (world / MARKER_NAME).write_text(json.dumps(marker), encoding="utf-8")
    with pytest.raises(WorldRefused, match="fingerprint does not match"):
        verify_world(world)


def test_a_database_changed_after_the_check_is_refused_when_a_cell_copies_it(world: Path, tmp_path: Path) -> None:
    from pytest_assistant_eval.suites.calibration.world import open_world

    verify_world(world)
    conn = sqlite3.connect(world / "base.sqlite")
    conn.execute("UPDATE listings SET distance_km = 3.5 WHERE id = 'L-101'")
    conn.commit()
    conn.close()
    with pytest.raises(WorldRefused, match="base.sqlite changed since it was built"):
        open_world(world, "base", tmp_path / "cell")
    assert not (tmp_path / "cell" / "world-base.sqlite").exists()
