"""The store: its schema made and upgraded from an empty database, tile sets stored, read back, replaced only
when asked, corrections bounded, examples read again for a new classifier; on SQLite and on a real
PostgreSQL server."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bench_loader import load_benchmark
from sqlalchemy import create_engine, inspect

from store import StoreError, open_store
from store.database import head_revision, schema_revision
from store.sets import (
    TAUGHT_PER_FACE,
    Example,
    SetError,
    add_examples,
    examples_of,
    list_sets,
    remove_example,
    remove_set,
    save_set,
    summary,
)
from usecases.sets import tile_set
from vision.contract import CLASSIFIER_CLASSES

FACES = ("m1", "m2", "p5")


def _example(face: str, seed: int, origin: str = "layout") -> Example:
    rng = np.random.default_rng(seed)
    crops = rng.integers(0, 255, (4, 16, 16, 3), np.uint8)
    features = rng.normal(size=(4, 8)).astype(np.float32)
    return Example(face, crops, features / np.linalg.norm(features, axis=1, keepdims=True), origin)


class FakeClassifier:
    """Reads any crop as features of its mean colour: what ``tile_set`` asks of a classifier."""

    identity = "fake-model"

    def infer(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        features = np.zeros((len(crops), 8), np.float32)
        features[:, :3] = crops.reshape(len(crops), -1, 3).mean(axis=1)
        features /= np.linalg.norm(features, axis=1, keepdims=True)
        return np.zeros((len(crops), len(CLASSIFIER_CLASSES)), np.float32), features


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    base: str = request.getfixturevalue("postgres_url")
    store = open_store(base)
    with store.engine.begin() as connection:  # each test its own tables: empty them
        for table in ("set_examples", "tile_sets"):
            connection.exec_driver_sql(f"DELETE FROM {table}")
    return base


def test_an_empty_database_is_upgraded_to_the_newest_schema(url: str) -> None:
    store = open_store(url)
    assert schema_revision(store) == head_revision()
    tables = set(inspect(store.engine).get_table_names())
    assert {"tile_sets", "set_examples", "alembic_version"} <= tables


def test_a_set_is_stored_listed_read_and_removed(url: str) -> None:
    store = open_store(url)
    examples = [_example(face, i) for i, face in enumerate(FACES)]
    summary = save_set(store, " 奶奶的 set-2 ", examples, "layout.jpg", "model-a")
    assert (summary.name, summary.examples, summary.faces) == ("奶奶的 set-2", 3, 3)
    assert [s.name for s in list_sets(store)] == ["奶奶的 set-2"]
    back = examples_of(store, summary.name)
    assert [e.face for e in back] == list(FACES)
    assert np.array_equal(back[0].crops, examples[0].crops)
    assert np.allclose(back[2].features, examples[2].features)
    remove_set(store, summary.name)
    assert list_sets(store) == []
    with pytest.raises(SetError) as missing:
        remove_set(store, summary.name)
    assert missing.value.code == "no_such_set"


def test_a_name_is_checked_and_an_existing_set_replaced_only_when_asked(url: str) -> None:
    store = open_store(url)
    with pytest.raises(SetError) as bad:
        save_set(store, "../etc", [_example("m1", 0)], "x", "model-a")
    assert bad.value.code == "bad_set_name"
    save_set(store, "home", [_example("m1", 0)], "first.jpg", "model-a")
    with pytest.raises(SetError) as exists:
        save_set(store, "home", [_example("m2", 1)], "second.jpg", "model-a")
    assert exists.value.code == "set_exists"
    assert [e.face for e in examples_of(store, "home")] == ["m1"]  # the refused write changed nothing
    twice = [_example("m2", 1), _example("p5", 2)]
    replaced = save_set(store, "home", twice, "second.jpg", "model-a", replace=True)
    assert replaced.source == "second.jpg" and [e.face for e in examples_of(store, "home")] == ["m2", "p5"]


def test_corrections_keep_the_newest_few_a_face_and_never_drop_the_layout(url: str) -> None:
    store = open_store(url)
    save_set(store, "club", [_example("m1", 0), _example("m2", 1)], "layout.jpg", "model-a")
    for seed in range(TAUGHT_PER_FACE + 3):
        add_examples(store, "club", [_example("m1", 100 + seed, "correction")], "model-a")
    kept = examples_of(store, "club")
    taught = [e for e in kept if e.origin == "correction"]
    assert len(taught) == TAUGHT_PER_FACE
    newest = _example("m1", 100 + TAUGHT_PER_FACE + 2)
    assert np.array_equal(taught[-1].crops, newest.crops)
    assert [e.face for e in kept if e.origin == "layout"] == ["m1", "m2"]


def test_a_correction_replaces_an_earlier_one_and_an_example_is_removed(url: str) -> None:
    store = open_store(url)
    save_set(store, "club", [_example("m1", 0), _example("m2", 1)], "layout.jpg", "model-a")
    first = add_examples(store, "club", [_example("m3", 10, "correction")], "model-a")
    assert first.summary.examples == 3 and len(first.ids) == 1
    second = add_examples(store, "club", [_example("m4", 11, "correction")], "model-a", replaces=first.ids[0])
    assert second.summary.examples == 3
    assert [(e.id, e.face) for e in examples_of(store, "club") if e.origin == "correction"] == [
        (second.ids[0], "m4")
    ]
    layout = examples_of(store, "club")[0]
    with pytest.raises(SetError) as not_taught:
        add_examples(store, "club", [_example("m5", 12, "correction")], "model-a", replaces=layout.id)
    assert not_taught.value.code == "no_such_example" and summary(store, "club").examples == 3
    with pytest.raises(SetError) as guarded:
        remove_example(store, "club", layout.id or 0, origin="correction")
    assert guarded.value.code == "no_such_example" and summary(store, "club").examples == 3
    assert remove_example(store, "club", second.ids[0]).examples == 2
    # a correction already gone (trimmed, removed) leaves nothing to take back: the new one is stored
    third = add_examples(store, "club", [_example("m6", 13, "correction")], "model-a", replaces=second.ids[0])
    assert third.summary.examples == 3
    assert remove_example(store, "club", third.ids[0], origin="correction").examples == 2
    with pytest.raises(SetError) as gone:
        remove_example(store, "club", second.ids[0])
    assert gone.value.code == "no_such_example"
    remove_example(store, "club", layout.id)
    last = examples_of(store, "club")[0]
    with pytest.raises(SetError) as only:
        remove_example(store, "club", last.id)
    assert only.value.code == "bad_example" and summary(store, "club").examples == 1


def test_an_example_id_is_never_given_again(url: str) -> None:
    """A phone may still hold the id of an example since taken back: no new example may answer to it."""
    store = open_store(url)
    save_set(store, "club", [_example("m1", 0), _example("m2", 1)], "layout.jpg", "model-a")
    taught = add_examples(store, "club", [_example("m3", 10, "correction")], "model-a").ids[0]
    save_set(store, "club", [_example("m1", 2), _example("m2", 3)], "again.jpg", "model-a", replace=True)
    later = add_examples(store, "club", [_example("m4", 11, "correction")], "model-a").ids[0]
    assert min(e.id or 0 for e in examples_of(store, "club")) > taught and later > taught
    with pytest.raises(SetError) as stale:
        remove_example(store, "club", taught)
    assert stale.value.code == "no_such_example" and summary(store, "club").examples == 3


def test_a_set_is_read_again_from_its_crops_for_another_classifier(url: str) -> None:
    store = open_store(url)
    save_set(store, "new-model", [_example(face, i) for i, face in enumerate(FACES)], "x", "model-a")
    classifier = FakeClassifier()
    read = tile_set(store, "new-model", classifier)  # type: ignore[arg-type]
    expected = classifier.infer(examples_of(store, "new-model")[0].crops)[1]
    assert np.allclose(read.features[:4], expected, atol=1e-6)
    assert [CLASSIFIER_CLASSES[i] for i in read.classes] == sorted(FACES, key=CLASSIFIER_CLASSES.index)
    assert np.allclose(examples_of(store, "new-model")[0].features, expected, atol=1e-6)  # stored so


def test_a_store_that_cannot_be_opened_says_which(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not a database URL"):
        open_store("no such thing")
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StoreError, match="can't open or upgrade"):
        open_store(f"sqlite:///{blocker}/inside/store.db")


def test_a_database_another_version_made_is_upgraded_not_recreated(tmp_path: Path) -> None:
    """A database of revision 0001 (sets, no tables at the table yet) holding a set keeps it through the
    upgrade to the newest revision, which adds the tables."""
    url = f"sqlite:///{tmp_path / 'old.db'}"
    store = open_store(url)
    save_set(store, "kept", [_example("m1", 0)], "x", "model-a")
    store.close()
    engine = create_engine(url)
    with engine.begin() as connection:  # back to what revision 0001 made
        for table in ("round_revisions", "rounds", "tables"):
            connection.exec_driver_sql(f"DROP TABLE {table}")
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0001'")
    engine.dispose()
    from store import database

    database._OPENED.pop(url, None)
    again = open_store(url)
    assert [e.face for e in examples_of(again, "kept")] == ["m1"]
    assert schema_revision(again) == head_revision()
    assert {"tables", "rounds", "round_revisions"} <= set(inspect(again.engine).get_table_names())


store_bench = load_benchmark("bench_store")  # the upgrade's kill points and races, measured there too
_at_revision_0002 = store_bench.at_revision_0002


@pytest.mark.parametrize("point", list(store_bench.KILL_POINTS))
def test_an_upgrade_killed_midway_leaves_the_store_as_it_was(tmp_path: Path, point: str) -> None:
    """kill -9 before each step of the batch migration 0003 (the table copied, the old one dropped, the copy
    renamed, indexed, the revision recorded): the store opens afterwards, upgraded, its examples all there
    (the upgrade is one transaction)."""
    killed = store_bench.kill_during_upgrade(tmp_path, point)
    assert killed.died_there and killed.opened and killed.examples == len(store_bench.FACES)
    url = f"sqlite:///{tmp_path / f'killed_{point}.db'}"
    left = create_engine(url)
    assert not [name for name in inspect(left).get_table_names() if name.startswith("_alembic_tmp")]
    left.dispose()


def test_a_temporary_table_a_killed_upgrade_left_is_cleaned(tmp_path: Path) -> None:
    """What an older version's killed upgrade left (its batch table) no longer blocks every later open."""
    from store import database

    url = f"sqlite:///{tmp_path / 'left.db'}"
    _at_revision_0002(url)
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE _alembic_tmp_set_examples (id INTEGER PRIMARY KEY)")
    engine.dispose()
    database._OPENED.pop(url, None)
    again = open_store(url)
    assert schema_revision(again) == head_revision()
    assert "_alembic_tmp_set_examples" not in inspect(again.engine).get_table_names()


def test_processes_opening_a_fresh_store_at_once_all_open_it(url: str, tmp_path: Path) -> None:
    """Three processes opening one fresh store together: the upgrades queue (an advisory lock on
    PostgreSQL, BEGIN IMMEDIATE on SQLite), and every process opens it."""
    fresh = (
        f"sqlite:///{tmp_path / 'fresh.db'}"
        if url.startswith("sqlite")
        else store_bench.emptied_postgres(url)
    )
    assert store_bench.race(fresh, 3) == 3


def test_smj_db_upgrade_upgrades_as_a_step_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import smj
    from store import database

    url = f"sqlite:///{tmp_path / 'step.db'}"
    _at_revision_0002(url)
    database._OPENED.pop(url, None)
    monkeypatch.setenv("SMJ_DATABASE_URL", url)
    assert smj.main(["db", "upgrade"]) == 0
    assert f"schema at revision {head_revision()}" in capsys.readouterr().out
    with pytest.raises(StoreError, match="run smj db upgrade"):  # opened without upgrading: refused
        database._OPENED.pop(url, None)
        engine = create_engine(url)
        with engine.begin() as connection:
            connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0002'")
        engine.dispose()
        open_store(url, upgrade=False)


def test_removals_at_once_never_empty_a_set(url: str) -> None:
    """Every example of a set removed by as many threads at once: one example always stays (the others are
    refused as the last), and a set with none would be refused by name, never read."""
    import threading

    store = open_store(url)
    save_set(
        store, "club", [_example(face, seed) for seed, face in enumerate(("m1", "m2", "m3", "m4"))], "x", "a"
    )
    ids = [example.id or 0 for example in examples_of(store, "club")]
    outcomes: list[str] = []
    start = threading.Barrier(len(ids))

    def remove(example: int) -> None:
        start.wait()
        try:
            remove_example(store, "club", example)
            outcomes.append("removed")
        except SetError as error:
            outcomes.append(error.code)

    threads = [threading.Thread(target=remove, args=(example,)) for example in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert outcomes.count("removed") == len(ids) - 1 and outcomes.count("bad_example") == 1, outcomes
    assert summary(store, "club").examples == 1


def test_an_id_removed_before_the_upgrade_is_not_given_again(tmp_path: Path) -> None:
    """A store of revision 0002 whose newest example was removed: after the upgrade a new example takes
    no id an earlier version gave (migration 0004 moves the sequence past them)."""
    from store import database

    url = f"sqlite:///{tmp_path / 'ids.db'}"
    store = open_store(url)
    save_set(store, "club", [_example("m1", 0), _example("m2", 1), _example("m3", 2)], "x", "model-a")
    removed = max(e.id or 0 for e in examples_of(store, "club"))
    store.close()
    database._OPENED.pop(url, None)
    engine = create_engine(url)
    with engine.begin() as connection:  # as revision 0002 left it: no AUTOINCREMENT sequence, the top removed
        connection.exec_driver_sql(f"DELETE FROM set_examples WHERE id = {removed}")
        connection.exec_driver_sql("DELETE FROM sqlite_sequence WHERE name = 'set_examples'")
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0002'")
    engine.dispose()
    again = open_store(url)
    added = add_examples(again, "club", [_example("m4", 3, "correction")], "model-a").ids[0]
    assert added > removed and schema_revision(again) == head_revision()


def test_the_models_and_the_migrations_agree(url: str) -> None:
    """Upgraded to the newest revision, the database is what ``store.schema`` describes: Alembic's
    comparison finds nothing to add, drop or alter (constraints named by one convention)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from store.schema import metadata

    store = open_store(url)
    with store.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), metadata) == []


def test_the_next_migration_is_written_from_the_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``smj db revision``: a column added to a model is written as the next numbered migration."""
    import shutil

    from sqlalchemy import Column, MetaData, Text

    import store.schema as schema
    from store.database import MIGRATIONS, new_revision

    migrations = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS, migrations, ignore=shutil.ignore_patterns("__pycache__"))
    models = MetaData(
        naming_convention=schema.NAMING
    )  # the models and one column more, the shipped ones kept
    for table in schema.metadata.sorted_tables:
        table.to_metadata(models)
    models.tables["tables"].append_column(Column("notes", Text, nullable=True))
    monkeypatch.setattr(schema, "metadata", models)
    written = new_revision("a table's notes", migrations)
    text = written.read_text(encoding="utf-8")
    assert written.name.startswith(f"{int(head_revision()) + 1:04d}_")
    assert f"down_revision = '{head_revision()}'" in text and "batch_alter_table('tables'" in text
    assert "add_column(sa.Column('notes'" in text
