"""The command line of the use cases: ``smj set add|list|show|remove`` (the sets on the table, taught from
photos and kept in the store; ``--set NAME`` for ``smj score`` and ``smj detect``: ``set_loader``),
``smj table new|show|export`` and ``smj settle --table`` (``settle_stored``: the night's tables), and
``smj db upgrade|revision`` (the store's schema).

Top-level imports stay light: the store, numpy and the models load inside the command that needs them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

LAYOUT_HELP = (
    "a photo of the set laid out face up: three rows of nine, 万 (m) on top, 筒 (p) in the middle, 条 (s) "
    "at the bottom, 1 to 9 left to right; below them an optional fourth row of variants, in this order, "
    "each optional: a red 5万, a red 5筒, a red 5条, a back (a photo from across the table is read turned)"
)


def register(commands: argparse._SubParsersAction) -> None:
    group = commands.add_parser(
        "set",
        help="the tile sets on your table: teach one from a photo, list, show, remove",
        description="A set taught from one photo of its tiles reads that set's faces right in every photo "
        "after it (smj score PHOTO --set NAME). Sets live in the store: SMJ_DATABASE_URL, by default a "
        "SQLite file in your data folder.",
    )
    sets = group.add_subparsers(dest="set_command", required=True, metavar="COMMAND")
    add = sets.add_parser("add", help="teach a set from a photo of its tiles", description=LAYOUT_HELP)
    add.add_argument("name", help="the set's name (1-40 letters, digits, spaces, '.', '-', '_')")
    add.add_argument("photo", help=LAYOUT_HELP)
    add.add_argument(
        "--row",
        choices=("m", "p", "s"),
        help="the photo holds one row of nine of this suit, 1 to 9 left to right: its tiles are added to "
        "the stored set as more examples",
    )
    add.add_argument("--replace", action="store_true", help="replace a stored set of this name")
    add.add_argument("--json", action="store_true", help="print what was stored as JSON")
    add.set_defaults(func=run_add)
    listing = sets.add_parser("list", help="the stored sets")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=run_list)
    show = sets.add_parser("show", help="a set's examples as a contact sheet (PNG), each named")
    show.add_argument("name")
    show.add_argument("--out", required=True, metavar="PNG", help="where to write the contact sheet")
    show.set_defaults(func=run_show)
    remove = sets.add_parser("remove", help="remove a stored set")
    remove.add_argument("name")
    remove.set_defaults(func=run_remove)
    register_tables(commands)
    _extend_settle_and_detect(commands)
    _register_db(commands)


def _register_db(commands: argparse._SubParsersAction) -> None:
    database = commands.add_parser(
        "db",
        help="the store itself: upgrade its schema to this version's",
        description="The store (SMJ_DATABASE_URL, by default a SQLite file in your data folder) is upgraded "
        "whenever smj opens it; smj db upgrade does it as a step of its own (before starting servers).",
    )
    steps = database.add_subparsers(dest="db_command", required=True, metavar="COMMAND")
    upgrade = steps.add_parser(
        "upgrade", help="upgrade the store's schema to this version's (all or nothing)"
    )
    upgrade.set_defaults(func=run_db_upgrade)
    revision = steps.add_parser(
        "revision",
        help="write the next migration from the models (store/schema.py), for a developer to finish",
        description="Writes store/migrations/versions/NNNN_MESSAGE.py: what store/schema.py holds beyond the "
        "newest revision, as Alembic's autogenerate sees it. Read it, finish it by hand (renames, data to "
        "move), and test it; tests/store/test_store.py checks that the models and the migrations agree.",
    )
    revision.add_argument("message", help="what the migration does, e.g. 'a table's notes'")
    revision.set_defaults(func=run_db_revision)


def run_db_revision(args: argparse.Namespace) -> int:
    from store.database import new_revision

    print(f"wrote {new_revision(args.message)}: read it and finish it before it ships")
    return 0


def run_db_upgrade(_: argparse.Namespace) -> int:
    from store import StoreError
    from store.database import head_revision, schema_revision

    try:
        store = _store()
    except StoreError as error:
        return _fail(str(error), "db upgrade")
    print(f"{store.url}: schema at revision {schema_revision(store)} (this version's: {head_revision()})")
    return 0


def _fail(message: str, command: str = "set") -> int:
    print(f"smj {command}: {message}", file=sys.stderr)
    return 2


SET_HINTS = {"set_exists": " (give --replace to replace it)", "no_such_set": " (smj set list shows them)"}


def _set_failure(error: Exception) -> int:
    """A store's refusal about a set, with what to type next where there is something."""
    return _fail(f"{error}{SET_HINTS.get(getattr(error, 'code', ''), '')}")


def _store() -> Any:
    from store import open_store

    return open_store()


def set_loader(name: str) -> Any:
    """For ``--set NAME``: a function of the detector giving the stored set as its classifier reads it;
    an unknown set or an unreachable store raises ``ValueError`` with the message to print (a detector
    that reads no sets, ``ModelError``)."""

    def load(detector: Any) -> Any:
        from store import StoreError
        from usecases.sets import tile_set

        classifier = detector.set_classifier()
        try:
            return tile_set(_store(), name, classifier)
        except StoreError as error:
            raise ValueError(str(error)) from None

    return load


def run_add(args: argparse.Namespace) -> int:
    from store import StoreError
    from store.sets import SetError
    from usecases.sets import keep, learn
    from vision.detect.detector import Detector, ModelError
    from vision.detect.tileset import LayoutError
    from vision.images import ImageError

    try:
        detector = Detector()
        taught = learn(args.photo, detector, args.name, args.row)
    except (ModelError, ImageError, LayoutError) as error:
        return _fail(f"{args.photo}: {getattr(error, 'message', None) or error}")
    found, layout = taught.examples, taught.layout
    model = detector.set_classifier().identity
    source = f"{Path(args.photo).name} ({'a row of ' + args.row if args.row else 'the layout'})"
    try:
        kept = keep(_store(), taught, args.name, model, source=source, row=args.row, replace=args.replace)
    except (StoreError, SetError) as error:
        return _set_failure(error)
    summary, examples = kept.summary, kept.examples
    faces = taught.faces()
    if args.json:
        print(json.dumps({**summary.to_json(), "turned": layout.turned, "stored": faces}, ensure_ascii=False))
        return 0
    way = " (taken from across the table: read turned)" if layout.turned else ""
    print(f"set {summary.name!r}: stored {examples} tiles from {args.photo}{way}")
    print(
        f"  {summary.examples} examples of {summary.faces} faces in all, {len(found.features[0])} views each"
    )
    misread = [
        f"{f['face']} (alone read as {f['classifier_alone']})"
        for f in faces
        if f["face"] != f["classifier_alone"]
    ]
    if misread:
        print(f"  faces the classifier alone misreads, now read from the set: {', '.join(misread)}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from store import StoreError
    from store.sets import list_sets

    try:
        summaries = list_sets(_store())
    except StoreError as error:
        return _fail(str(error))
    if args.json:
        print(json.dumps([s.to_json() for s in summaries], ensure_ascii=False))
    elif not summaries:
        print("no sets stored (teach one: smj set add NAME PHOTO)")
    for s in [] if args.json else summaries:
        when = f"{s.updated_at:%Y-%m-%d %H:%M}"
        print(f"{s.name}: {s.examples} examples of {s.faces} faces, from {s.source}, {when}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from store import StoreError
    from store.sets import SetError, examples_of
    from store.sheet import contact_sheet

    try:
        examples = examples_of(_store(), args.name)
    except (StoreError, SetError) as error:
        return _set_failure(error)
    try:
        contact_sheet(examples, Path(args.out))
    except OSError as error:
        return _fail(f"{args.out}: {error}")
    print(f"{args.out}: {len(examples)} examples of set {args.name!r}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    from store import StoreError
    from store.sets import SetError, remove_set

    try:
        remove_set(_store(), args.name)
    except (StoreError, SetError) as error:
        return _set_failure(error)
    print(f"removed set {args.name!r}")
    return 0


# --- tables at the table -----------------------------------------------------------------------------------


def register_tables(commands: argparse._SubParsersAction) -> None:
    group = commands.add_parser(
        "table",
        help="a night's table: four seats, its rounds and money (the page writes the same tables)",
        description="Tables live in the store (SMJ_DATABASE_URL). Make one here or on the page; enter its "
        "rounds on the page (every phone at the table with the join code); read and export them here; "
        "smj settle --table ID settles one of its rounds.",
    )
    tables = group.add_subparsers(dest="table_command", required=True, metavar="COMMAND")
    new = tables.add_parser("new", help="a new table: prints its id and join code")
    new.add_argument("--players", required=True, help="the four names, comma-separated, in turn order")
    new.add_argument("--preset", default="chengdu", help="the rules (smj score --help lists the presets)")
    new.add_argument("--base", type=int, default=1, help="the base stake (底)")
    new.add_argument("--set", dest="tile_set", help="the set its photos are read with (smj set add)")
    new.set_defaults(func=run_table_new)
    show = tables.add_parser("show", help="a table's rounds, payments and the night's totals")
    show.add_argument("table", help="the table's id, or its join code as the page shows it")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=run_table_show)
    export = tables.add_parser("export", help="the night as CSV (a line a payment, then the totals) or JSON")
    export.add_argument("table", help="the table's id, or its join code as the page shows it")
    export.add_argument("--format", choices=("csv", "json"), default="csv")
    export.add_argument("--out", help="write it to this file (default: standard output)")
    export.set_defaults(func=run_table_export)


def _stored_table(key: str, command: str) -> Any:
    """The table of an id or join code, or ``None`` once the refusal is printed (the caller exits 2)."""
    from store import StoreError
    from store.tables import TableError, find_table

    try:
        return find_table(_store(), key)
    except (StoreError, TableError) as error:
        _fail(str(error), command)
        return None


def _heading(state: Any) -> str:
    return f"table {state.id}: {', '.join(state.players)}, {state.preset}, base {state.base}"


def run_table_new(args: argparse.Namespace) -> int:
    from store import StoreError
    from store.tables import TableError, create_table

    try:
        state, code = create_table(_store(), args.players.split(","), args.preset, args.base, args.tile_set)
    except (StoreError, TableError) as error:
        return _fail(str(error), "table")
    print(_heading(state))
    print(f"join code {code} (whoever holds it may write the table; it is not shown again)")
    return 0


def run_table_show(args: argparse.Namespace) -> int:
    from scoring.cli import format_ledger

    state = _stored_table(args.table, "table")
    if state is None:
        return 2
    if args.json:
        print(json.dumps(state.to_json(), ensure_ascii=False, indent=1))
        return 0
    print(_heading(state))
    for played in state.rounds:
        status = "over" if played.finished else "in play"
        print(f"round {played.number} ({status}, {len(played.events)} events, version {played.version})")
        print(format_ledger(played.ledger))
    totals = "  ".join(f"{name} {total:+d}" for name, total in zip(state.players, state.totals, strict=True))
    print(f"the night: {totals}")
    return 0


def run_table_export(args: argparse.Namespace) -> int:
    from store.tables import export_csv

    state = _stored_table(args.table, "table")
    if state is None:
        return 2
    text = (
        export_csv(state)
        if args.format == "csv"
        else json.dumps(state.to_json(), ensure_ascii=False, indent=1)
    )
    if not args.out:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return 0
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as error:
        return _fail(f"{args.out}: {error.strerror or error}", "table")
    print(f"{args.out}: {len(state.rounds)} rounds of table {state.id}")
    return 0


def _extend_settle_and_detect(commands: argparse._SubParsersAction) -> None:
    """What the store adds to the core's ``smj settle`` (a stored round: ``--table``) and to vision's ``smj
    detect`` (reading with a stored set: ``--set``), where those commands are registered."""
    settle = commands.choices.get("settle")
    if settle is not None:
        settle.add_argument(
            "--table",
            metavar="TABLE",
            help="settle a stored round of this table, by its id or join code (smj table)",
        )
        settle.add_argument(
            "--number", type=int, metavar="N", help="with --table: round N (default the last)"
        )
        settle.set_defaults(func=run_settle)
    detect = commands.choices.get("detect")
    if detect is not None:
        detect.add_argument("--set", metavar="NAME", help="the set on the table (smj set add), read with it")
        detect.set_defaults(func=run_detect)


def run_settle(args: argparse.Namespace) -> int:
    """``smj settle``: a round file as the core settles it, or a stored round (``--table``)."""
    from scoring import cli as scoring_cli

    if args.table is None:
        if args.number is not None:
            print("smj settle: --number goes with --table", file=sys.stderr)
            return 2
        return scoring_cli.run_settle(args)
    return settle_stored(args)


def run_detect(args: argparse.Namespace) -> int:
    """``smj detect``, its faces read with the stored set of ``--set`` when given."""
    from vision import cli as vision_cli

    return vision_cli.run_detect(args, set_loader(args.set) if args.set else None)


def settle_stored(args: argparse.Namespace) -> int:
    """``smj settle --table ID [--number N]``: a stored round (the last by default), under its table's
    preset and base."""
    from scoring.cli import settle_data
    from store.tables import TableError, round_json

    if args.round is not None:
        return _fail("give a round file or --table, not both", "settle")
    state = _stored_table(args.table, "settle")
    if state is None:
        return 2
    if not state.rounds:
        return _fail(f"table {state.id} has no round yet", "settle")
    number = args.number or state.rounds[-1].number
    try:
        data = round_json(state, number)
    except TableError as error:
        return _fail(str(error), "settle")
    return settle_data(data, f"table {state.id} round {number}", state.preset, str(state.base), args.json)
