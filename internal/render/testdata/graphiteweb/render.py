"""Answers /render requests with graphite-web's own view over memstore.

Usage: GW_DATA=data.json GW_WEBAPP=... python render.py
Input: {"series": ..., "requests": [{param: [values]}, ...]}.
Output: [[status, content type, body], ...] in request order.
"""
import json
import os
import sys

sys.path.insert(0, os.environ['GW_WEBAPP'])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ['DJANGO_SETTINGS_MODULE'] = 'graphite.settings'

import graphite.settings as gs  # noqa: E402

gs.STORAGE_FINDERS = ('memstore.Finder',)
gs.TAGDB = 'memstore.TagDB'
gs.DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}}
gs.LOG_DIR = os.environ.get('GW_LOGDIR', '/tmp')
gs.TIME_ZONE = 'UTC'
gs.DEFAULT_CACHE_DURATION = 0

import django  # noqa: E402

django.setup()

from django.test import RequestFactory  # noqa: E402
from graphite.render import views  # noqa: E402

data = json.load(open(os.environ['GW_DATA']))
rf = RequestFactory()
out = []
for params in data['requests']:
    params = dict(params, noCache=['1'])
    try:
        resp = views.renderView(rf.get('/render', params))
    except Exception as e:  # graphite-web's server answers these with a 500
        out.append([500, 'text/plain', '%s: %s' % (type(e).__name__, e)])
        continue
    out.append([resp.status_code, resp['Content-Type'], resp.content.decode()])
json.dump(out, sys.stdout)
