"""``python -m bot migrate-store --to postgresql://…``: copy every SQLite store of DATA_DIR into PostgreSQL.

The document and crawl-state store (``prodi.sqlite3``), the job runs (``runs.sqlite3``), the question log with
the admin answers (``insights.sqlite3``) and the announcements with their subscriptions and deliveries
(``announcements.sqlite3``; ids kept, so every delivery still names its announcement) are copied table by table, adding rows by primary key: a row PostgreSQL
already has is kept, so a rerun copies nothing twice and overwrites nothing. Then the row counts are compared table
by table; any difference exits 1. The SQLite files are only read. The URL is printed with its password masked.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bot.settings import Settings

__all__ = ["cmd_migrate_store"]


def cmd_migrate_store(args: argparse.Namespace, settings: Settings) -> int:
    from storage.errors import StoreError
    from storage.pg import PgDatabase, is_postgres_url, mask_url
    from storage.pg_transfer import (
        ANNOUNCEMENT_TABLES,
        DOCUMENT_TABLES,
        INSIGHTS_TABLES,
        RUN_TABLES,
        pg_counts,
        sqlite_counts,
        sqlite_to_pg,
    )

    target = args.to or (settings.database_url.get_secret_value() if settings.database_url else "")
    if not is_postgres_url(target):
        print("error: name the PostgreSQL store: python -m bot migrate-store --to postgresql://user:password@host/db "
              "(or set DATABASE_URL)", file=sys.stderr)
        return 2
    stores: list[tuple[str, Path, tuple[str, ...]]] = [
        ("documents", settings.db_path, DOCUMENT_TABLES),
        ("runs", settings.data_dir / "runs.sqlite3", RUN_TABLES),
        ("insights", settings.insights_path, INSIGHTS_TABLES),
        ("announcements", settings.data_dir / "announcements.sqlite3", ANNOUNCEMENT_TABLES),
    ]
    found = [(name, path, tables) for name, path, tables in stores if path.exists()]
    if not found:
        print(f"error: no SQLite store in DATA_DIR ({settings.data_dir}): nothing to copy", file=sys.stderr)
        return 2
    try:
        db = PgDatabase(target, statement_timeout_seconds=max(60.0, settings.database_statement_timeout_seconds),
                        connect_timeout_seconds=settings.database_connect_timeout_seconds, pool_size=2)
    except (StoreError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    report: list[dict[str, object]] = []
    try:
        for name, path, tables in found:
            if name == "insights" and pg_counts(db, ("questions",))["questions"] == 0:
                # the user-hash key travels with the question log, so /hapus still finds the copied questions;
                # only while PostgreSQL has logged none with a key of its own
                db.write("dropping an unused user-hash key",
                         lambda conn: conn.execute("DELETE FROM meta WHERE key = 'user_salt'"), repeatable=True)
            written = sqlite_to_pg(path, db, tables, mode="merge")
            source, copied = sqlite_counts(path, tables), pg_counts(db, tables)
            for table in tables:
                report.append({"store": name, "file": path.name, "table": table, "sqlite": source[table],
                               "postgresql": copied[table], "added": written.get(table, 0),
                               "ok": source[table] == copied[table]})
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        db.close()
    ok = all(row["ok"] for row in report)
    if args.json:
        print(json.dumps({"to": mask_url(target), "schema": db.schema, "ok": ok, "tables": report}))
    else:
        print(f"Copied DATA_DIR ({settings.data_dir}) into {mask_url(target)} (schema {db.schema}):")
        width = max(len(f"{r['file']}:{r['table']}") for r in report)
        for row in report:
            label = f"{row['file']}:{row['table']}".ljust(width)
            mark = "ok" if row["ok"] else "MISMATCH"
            print(f"  {label}  sqlite {row['sqlite']:>7}  postgresql {row['postgresql']:>7}  "
                  f"(added {row['added']})  {mark}")
        if not ok:
            print("Counts differ: PostgreSQL holds rows the SQLite files do not (written there since?) or lacks "
                  "some; nothing was deleted. Check the tables marked MISMATCH.", file=sys.stderr)
    return 0 if ok else 1
