"""Python 3.11 compatibility for graphite-web 1.1.10 (loaded by site.py for
the graphite daemons, which run with this directory on PYTHONPATH).

graphite-web 1.1.10 was written for Python <= 3.8; its /functions endpoint
calls inspect.getargspec and inspect.formatargspec, removed in Python 3.11.
These stand-ins return what the removed functions returned for the plain
functions graphite-web passes them, so /functions lists the same signatures
("sumSeries(*seriesLists)") that graphite-web printed on older Pythons.
"""

import collections
import inspect

if not hasattr(inspect, "getargspec"):
    _ArgSpec = collections.namedtuple("ArgSpec", "args varargs keywords defaults")

    def getargspec(func):
        spec = inspect.getfullargspec(func)
        if spec.kwonlyargs or spec.annotations:
            raise ValueError("function has keyword-only parameters or annotations")
        return _ArgSpec(spec.args, spec.varargs, spec.varkw, spec.defaults)

    inspect.getargspec = getargspec

if not hasattr(inspect, "formatargspec"):
    def formatargspec(args, varargs=None, varkw=None, defaults=None):
        specs = []
        first_default = len(args) - len(defaults) if defaults else len(args)
        for i, arg in enumerate(args):
            spec = str(arg)
            if i >= first_default:
                spec += "=" + repr(defaults[i - first_default])
            specs.append(spec)
        if varargs is not None:
            specs.append("*" + varargs)
        if varkw is not None:
            specs.append("**" + varkw)
        return "(" + ", ".join(specs) + ")"

    inspect.formatargspec = formatargspec
