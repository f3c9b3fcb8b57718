"""In-memory storage for graphite-web, fed from a JSON file.

A finder (plain series, globs) and a tag database (seriesByTag) over
{"series": {name: [start, step, [values]]}}, so that graphite-web's own
evaluator computes the targets the differential test sends. Reads behave
like whisper: the first point is the step boundary after `from`.
"""
import json
import os
import re

from graphite.finders import match_entries
from graphite.finders.utils import BaseFinder
from graphite.intervals import Interval, IntervalSet
from graphite.node import BranchNode, LeafNode
from graphite.readers.utils import BaseReader
from graphite.tags.base import BaseTagDB

DATA = json.load(open(os.environ['GW_DATA']))


class Reader(BaseReader):
    def __init__(self, name):
        self.name = name

    def get_intervals(self):
        return IntervalSet([Interval(0, 2 ** 31)])

    def fetch(self, startTime, endTime, now=None, requestContext=None):
        start, step, vals = DATA['series'][self.name]
        pts = {start + i * step: (None if v is None else float(v)) for i, v in enumerate(vals)}
        s = startTime - startTime % step + step
        e = endTime - endTime % step + step
        return (s, e, step), [pts.get(t) for t in range(s, e, step)]


class Finder(BaseFinder):
    local = True

    def find_nodes(self, query):
        parts = query.pattern.split('.')
        seen = set()
        for name in sorted(DATA['series']):
            if ';' in name:
                if name == query.pattern:
                    yield LeafNode(name, Reader(name))
                continue
            nodes = name.split('.')
            if len(nodes) < len(parts):
                continue
            if not all(match_entries([nodes[i]], parts[i]) for i in range(len(parts))):
                continue
            prefix = '.'.join(nodes[:len(parts)])
            leaf = len(nodes) == len(parts)
            if (leaf, prefix) in seen:
                continue
            seen.add((leaf, prefix))
            yield LeafNode(prefix, Reader(prefix)) if leaf else BranchNode(prefix)


def _matches(op, spec, value):
    if op == '=':
        return value == spec
    if op == '!=':
        return value != spec
    if not spec.startswith('^'):
        spec = '^(' + spec + ')'
    found = re.match(spec, value) is not None
    return found if op == '=~' else not found


class TagDB(BaseTagDB):
    """The rules of graphite-web's local database tag store, in memory."""

    def _find_series(self, tags, requestContext=None):
        specs = [self.parse_tagspec(t) for t in tags]
        if all(_matches(op, spec, '') for (_, op, spec) in specs):
            raise ValueError("At least one tagspec must not match the empty string")
        out = []
        for name in sorted(DATA['series']):
            if ';' not in name:
                continue
            t = self.parse(name).tags
            if all(_matches(op, spec, t.get(tag, '')) for (tag, op, spec) in specs):
                out.append(name)
        return out

    def get_series(self, path, requestContext=None):
        return None

    def list_tags(self, tagFilter=None, limit=None, requestContext=None):
        return []

    def get_tag(self, tag, valueFilter=None, limit=None, requestContext=None):
        return None

    def list_values(self, tag, valueFilter=None, limit=None, requestContext=None):
        return []

    def tag_series(self, series, requestContext=None):
        raise NotImplementedError()

    def del_series(self, series, requestContext=None):
        return True
