"""Feeds graphite-web the bench's data without carbon, in bulk.

Run with the parity venv's python and the Graphite environment of
daemons.Graphite.env() (DJANGO_SETTINGS_MODULE, GRAPHITE_SETTINGS_MODULE):

  python graphite_bulk.py SPEC.json

SPEC names the series and their points as bench_render.series_points does
(glob, sum, tagged, start, now, every). Every series with points gets a
whisper file as carbon-cache would create it (whisper.create with the
parity schema's retentions, xFilesFactor 0.5, average, then one
whisper.update_many of its points: the function carbon's writer calls);
every tagged series is registered in graphite-web's tag database in one
transaction, the rows graphite.tags' LocalDatabaseTagDB.tag_series writes
(one HTTP call per series through carbon took hours at 300,000). A tagged
series whose only point would make a file that no request of the bench
reads gets no file (see bench_render.py).
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import django  # noqa: E402

django.setup()

import whisper  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.conf import settings  # noqa: E402
from graphite.tags.localdatabase import LocalDatabaseTagDB  # noqa: E402
from graphite.tags.utils import TaggedSeries  # noqa: E402

import bench_render  # noqa: E402
import daemons  # noqa: E402


def whisper_path(name):
    return os.path.join(settings.WHISPER_DIR, TaggedSeries.encode(name, os.sep) + ".wsp")


def write_whisper(spec):
    archives = [whisper.parseRetentionDef(r) for r in daemons.RETENTIONS.split(",")]
    n = 0
    for name, pts in bench_render.series_points(spec):
        if not bench_render.graphite_file(spec, name, pts):
            continue
        path = whisper_path(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        whisper.create(path, archives, xFilesFactor=0.5, aggregationMethod="average")
        whisper.update_many(path, pts)
        n += 1
    return n


def register_tags(names):
    """The rows tag_series writes for each name, in one transaction."""
    db = LocalDatabaseTagDB(settings)
    parsed = [db.parse(n) for n in names]
    with transaction.atomic(), connection.cursor() as cur:
        tags = sorted({t for p in parsed for t in p.tags})
        values = sorted({v for p in parsed for v in p.tags.values()})
        cur.executemany("INSERT OR IGNORE INTO tags_tag (tag) VALUES (%s)", [[t] for t in tags])
        cur.executemany("INSERT OR IGNORE INTO tags_tagvalue (value) VALUES (%s)", [[v] for v in values])
        cur.execute("SELECT id, tag FROM tags_tag")
        tag_ids = {t: i for i, t in cur.fetchall()}
        cur.execute("SELECT id, value FROM tags_tagvalue")
        value_ids = {v: i for i, v in cur.fetchall()}
        cur.executemany("INSERT OR IGNORE INTO tags_series (hash, path) VALUES (%s, %s)",
                        [[db._path_hash(p.path), p.path] for p in parsed])
        cur.execute("SELECT id, hash FROM tags_series")
        series_ids = {h: i for i, h in cur.fetchall()}
        rows = []
        for p in parsed:
            sid = series_ids[db._path_hash(p.path)]
            rows.extend([sid, tag_ids[t], value_ids[v]] for t, v in p.tags.items())
        cur.executemany("INSERT OR IGNORE INTO tags_seriestag (series_id, tag_id, value_id) VALUES (%s, %s, %s)", rows)


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    t = time.monotonic()
    n = write_whisper(spec)
    print("whisper: %d files in %.0f s" % (n, time.monotonic() - t), flush=True)
    t = time.monotonic()
    tagged = bench_render.tagged_names(spec)
    register_tags(tagged)
    print("tags: %d series in %.0f s" % (len(tagged), time.monotonic() - t), flush=True)


if __name__ == "__main__":
    main()
