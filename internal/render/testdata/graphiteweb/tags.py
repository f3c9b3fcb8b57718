"""Answers /tags requests with graphite-web's local database tag store.

Usage: GW_DATA=data.json GW_WEBAPP=... python tags.py
Input: {"series": [tagged names], "requests": [[path, {param: [values]}], ...]}.
Output: [[status, body], ...] in request order, from graphite-web's views
over an in-memory SQLite database holding the series.
"""
import json
import os
import sys

sys.path.insert(0, os.environ['GW_WEBAPP'])
os.environ['DJANGO_SETTINGS_MODULE'] = 'graphite.settings'

import graphite.settings as gs  # noqa: E402

gs.DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}}
gs.LOG_DIR = os.environ.get('GW_LOGDIR', '/tmp')
gs.TAGDB_CACHE_DURATION = 0

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import RequestFactory  # noqa: E402

call_command('migrate', run_syncdb=True, verbosity=0)

from graphite.storage import STORE  # noqa: E402
from graphite.tags import views  # noqa: E402

data = json.load(open(os.environ['GW_DATA']))
STORE.tagdb.tag_multi_series(data['series'])
rf = RequestFactory()
out = []
for path, params in data['requests']:
    req = rf.get('/tags' + path, params)
    if path in ('', '/'):
        resp = views.tagList(req)
    elif path == '/findSeries':
        resp = views.findSeries(req)
    elif path == '/autoComplete/tags':
        resp = views.autoCompleteTags(req)
    elif path == '/autoComplete/values':
        resp = views.autoCompleteValues(req)
    else:
        resp = views.tagDetails(req, path[1:])
    out.append([resp.status_code, resp.content.decode()])
json.dump(out, sys.stdout)
