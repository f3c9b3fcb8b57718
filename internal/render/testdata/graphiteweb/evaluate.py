"""Evaluates targets with graphite-web's evaluator over memstore's data.

Usage: GW_DATA=data.json GW_WEBAPP=.../graphite-web-1.1.10/webapp python evaluate.py
Input (GW_DATA): {"series": ..., "targets": [...], "from": unix, "until": unix}.
Output (stdout): {target: [{"name", "tags", "start", "end", "step", "values"}] or {"error": ...}}.
"""
import json
import math
import os
import sys
from datetime import datetime

sys.path.insert(0, os.environ['GW_WEBAPP'])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ['DJANGO_SETTINGS_MODULE'] = 'graphite.settings'

import graphite.settings as gs  # noqa: E402

gs.STORAGE_FINDERS = ('memstore.Finder',)
gs.TAGDB = 'memstore.TagDB'
gs.DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}}
gs.LOG_DIR = os.environ.get('GW_LOGDIR', '/tmp')

import django  # noqa: E402

django.setup()

import pytz  # noqa: E402
from graphite.render.datalib import prefetchData  # noqa: E402
from graphite.render.evaluator import evaluateTarget  # noqa: E402

data = json.load(open(os.environ['GW_DATA']))
utc = pytz.utc
out = {}
for target in data['targets']:
    ctx = {
        'startTime': datetime.fromtimestamp(data['from'], utc),
        'endTime': datetime.fromtimestamp(data['until'], utc),
        'now': datetime.fromtimestamp(data['until'], utc),
        'localOnly': True, 'data': [], 'prefetched': {}, 'tzinfo': utc,
        'xFilesFactor': None, 'targets': [target],
    }
    try:
        prefetchData(ctx, [target])
        result = evaluateTarget(ctx, [target])
        out[target] = [{
            'name': s.name,
            'tags': {k: str(v) for k, v in dict(s.tags).items()},
            'start': s.start, 'end': s.end, 'step': s.step,
            'values': [None if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in list(s)],
        } for s in result]
    except Exception as e:  # graphite-web answers these with an error status
        out[target] = {'error': '%s: %s' % (type(e).__name__, e)}
json.dump(out, sys.stdout, default=str)
