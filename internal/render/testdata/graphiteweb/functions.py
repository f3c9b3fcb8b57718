"""Prints graphite-web's /functions data: {name: functionInfo} as JSON.

Usage: GW_WEBAPP=.../graphite-web-1.1.10/webapp python functions.py
(Python 3.11 lacks inspect.getargspec/formatargspec, which graphite-web
1.1.10 calls; they are provided here with their old behaviour.)
"""
import inspect
import json
import os
import sys

sys.path.insert(0, os.environ['GW_WEBAPP'])
os.environ['DJANGO_SETTINGS_MODULE'] = 'graphite.settings'

import graphite.settings as gs  # noqa: E402

gs.DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}}
gs.LOG_DIR = os.environ.get('GW_LOGDIR', '/tmp')


def _getargspec(f):
    a = inspect.getfullargspec(f)
    return (a.args, a.varargs, a.varkw, a.defaults)


def _formatargspec(args, varargs=None, varkw=None, defaults=None):
    specs = []
    first = len(args) - len(defaults or ())
    for i, a in enumerate(args):
        specs.append(a + ('=' + repr(defaults[i - first]) if defaults and i >= first else ''))
    if varargs:
        specs.append('*' + varargs)
    if varkw:
        specs.append('**' + varkw)
    return '(' + ', '.join(specs) + ')'


if not hasattr(inspect, 'getargspec'):
    inspect.getargspec = _getargspec
if not hasattr(inspect, 'formatargspec'):
    inspect.formatargspec = _formatargspec

import django  # noqa: E402

django.setup()

from graphite.functions import SeriesFunctions, functionInfo  # noqa: E402
from graphite.functions.views import jsonInfinityEncoder  # noqa: E402

print(json.dumps({n: functionInfo(n, f) for n, f in SeriesFunctions().items()}, cls=jsonInfinityEncoder))
