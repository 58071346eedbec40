"""A store that accumulates campaigns: their runs, machines and provenance in one SQLite file.

    pinbench store add RESULTS_DIR [--store FILE]   keep a campaign's results; print its id
    pinbench store list [--store FILE]              every stored campaign, one line each

``RESULTS_DIR`` is a campaign's results folder (``results/<campaign>``); the store
(default :data:`DEFAULT_STORE`, from the directory pinbench is started in) keeps its runs
table as it is (read back by the one reader, :func:`pinbench.results.runs.records_of`) and,
per machine, its ``environment.json`` (the pinbench version and commit that measured it,
:mod:`pinbench.provenance`; host, kernel, compiler, runtime) and ``topology.xml``. A
campaign stored again unchanged keeps its id; results measured again are a new campaign.
``pinbench compare`` takes a stored campaign's id where it takes a results folder. The
standard library's ``sqlite3`` is all it needs. The command's parser:
:mod:`pinbench.commands.store`.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from pinbench.results import formats
from pinbench.results.layout import STORE, Layout
from pinbench.results.runs import RunRecord, records_of

#: The store's file, relative to the project (where pinbench is started).
DEFAULT_STORE = Path(STORE)
SCHEMA = """
CREATE TABLE IF NOT EXISTS campaigns (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, source TEXT NOT NULL, added_at TEXT NOT NULL,
    version TEXT, git_commit TEXT, digest TEXT NOT NULL, runs_csv TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS machines (
    campaign INTEGER NOT NULL REFERENCES campaigns(id), machine TEXT NOT NULL,
    environment TEXT, topology TEXT, PRIMARY KEY (campaign, machine));
"""


@dataclass(frozen=True)
class Machine:
    """What a campaign recorded of one machine (None: not written)."""

    environment: dict | None  #: its ``environment.json``, in the current version
    topology: str | None  #: its ``topology.xml``


@dataclass(frozen=True)
class Campaign:
    """One campaign's runs table and machines, from its results folder or the store."""

    name: str
    source: str  #: its results folder, or ``store FILE #id``
    runs_csv: str  #: the runs table's text
    machines: dict[str, Machine]

    def records(self) -> list[RunRecord]:
        return records_of(self.runs_csv.splitlines(keepends=True), self.source)

    @property
    def provenance(self) -> dict:
        """The ``pinbench`` identity (version, commit, modified) of its first machine that
        recorded one ({} when none did)."""
        return next((m.environment["pinbench"] for m in self.machines.values()
                     if m.environment and "pinbench" in m.environment), {})

    def digest(self) -> str:
        """What identifies the campaign's content (runs, environments, topologies)."""
        content = json.dumps([self.name, self.runs_csv,
                              {k: [m.environment, m.topology] for k, m in
                               sorted(self.machines.items())}], sort_keys=True)
        return hashlib.sha256(content.encode()).hexdigest()


def _read(path: Path) -> str | None:
    return path.read_text() if path.is_file() else None


def from_results(root: Path) -> Campaign:
    """The campaign whose results are in ``root`` (ValueError: it has no runs table)."""
    layout = Layout(str(root))
    runs = Path(layout.all_runs)
    if not runs.is_file():
        raise ValueError(f"{root}: no {runs.name}: not a campaign's results folder, or "
                         "nothing measured yet")
    machines = {}
    for folder in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        environment = Path(layout.environment(folder.name))
        topology = _read(Path(layout.topology(folder.name)))
        if environment.is_file() or topology is not None:
            env = formats.read("environment", json.loads(environment.read_text()), environment) \
                if environment.is_file() else None
            machines[folder.name] = Machine(env, topology)
    return Campaign(Path(root).resolve().name, str(root), runs.read_text(), machines)


class Store:
    """The SQLite file of stored campaigns (created on first use)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def _connect(self, create: bool) -> sqlite3.Connection:
        if not create and not self.path.is_file():
            raise ValueError(f"{self.path}: no such store (pinbench store add RESULTS_DIR "
                             "makes it)")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path)
        connection.executescript(SCHEMA)
        return connection

    def add(self, campaign: Campaign) -> tuple[int, bool]:
        """Store ``campaign``: (its id, whether it was new: False when stored unchanged
        before)."""
        digest = campaign.digest()
        with closing(self._connect(create=True)) as db, db:
            found = db.execute("SELECT id FROM campaigns WHERE digest = ?", (digest,)).fetchone()
            if found:
                return found[0], False
            who = campaign.provenance
            cursor = db.execute(
                "INSERT INTO campaigns (name, source, added_at, version, git_commit, digest, "
                "runs_csv) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (campaign.name, str(Path(campaign.source).resolve()),
                 datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                 who.get("version"), who.get("commit"), digest, campaign.runs_csv))
            db.executemany("INSERT INTO machines VALUES (?, ?, ?, ?)",
                           [(cursor.lastrowid, name,
                             None if m.environment is None else json.dumps(m.environment),
                             m.topology) for name, m in campaign.machines.items()])
            return int(cursor.lastrowid), True

    def get(self, ident: int) -> Campaign:
        """The stored campaign ``ident`` (ValueError: none)."""
        with closing(self._connect(create=False)) as db, db:
            row = db.execute("SELECT name, runs_csv FROM campaigns WHERE id = ?",
                             (ident,)).fetchone()
            if row is None:
                raise ValueError(f"{self.path}: no stored campaign {ident}")
            machines = {name: Machine(None if env is None else json.loads(env), topology)
                        for name, env, topology in db.execute(
                            "SELECT machine, environment, topology FROM machines "
                            "WHERE campaign = ? ORDER BY machine", (ident,))}
        return Campaign(row[0], f"store {self.path} #{ident}", row[1], machines)

    def listing(self) -> list[dict]:
        """Every stored campaign: id, name, source, added_at, version, commit, machines."""
        with closing(self._connect(create=False)) as db, db:
            rows = db.execute(
                "SELECT c.id, c.name, c.source, c.added_at, c.version, c.git_commit, "
                "group_concat(m.machine, ' ') FROM campaigns c LEFT JOIN machines m "
                "ON m.campaign = c.id GROUP BY c.id ORDER BY c.id").fetchall()
        keys = ("id", "name", "source", "added_at", "version", "commit", "machines")
        return [dict(zip(keys, row)) for row in rows]
