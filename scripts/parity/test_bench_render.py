"""Tests of bench_render.py's VictoriaMetrics side: its answers compared with
pgts', the table, and (when a victoria-metrics binary is built) its
lifecycle with a few series. Run by internal/bench's TestBenchRenderScript:

  python3 -m unittest -v test_bench_render      (in scripts/parity)
"""

import argparse
import io
import json
import os
import signal
import sys
import tempfile
import time
import unittest
import unittest.mock
import urllib.parse
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_render  # noqa: E402
import daemons  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def vm_binary():
    for p in (os.path.join(ROOT, ".bench-tools", "bin", "victoria-metrics"), "/tmp/vmbin/victoria-metrics"):
        if os.path.isfile(p):
            return p
    return None


class Compare(unittest.TestCase):
    def test_answer_of_render(self):
        body = json.dumps([{"target": "a", "datapoints": [[1.0, 60], [None, 120]]}])
        self.assertEqual(bench_render.answer_of(body, "/render"), {"a": {60: 1.0, 120: None}})

    def test_answer_of_tagged_series_named_alike(self):
        body = json.dumps([{"target": "bench.tag", "tags": {"name": "bench.tag", "host": "h1", "dc": "dc1"}, "datapoints": [[1, 60]]},
                           {"target": "bench.tag", "tags": {"name": "bench.tag", "host": "h2", "dc": "dc2"}, "datapoints": [[2, 60]]}])
        self.assertEqual(bench_render.answer_of(body, "/render"),
                         {"bench.tag;dc=dc1;host=h1": {60: 1}, "bench.tag;dc=dc2;host=h2": {60: 2}})

    def test_answer_of_find(self):
        body = json.dumps({"metrics": [{"path": "bench.sum.s1", "is_leaf": "1"}, {"path": "bench.sum.x.", "is_leaf": "0"}, {"name": "*"}]})
        self.assertEqual(bench_render.answer_of(body, "/metrics/find"), {"bench.sum.s1": {}})

    def test_equal_values(self):
        a = {"s": {60: 1.0, 120: 2.0, 180: None, 240: 4.0}}
        b = {"s": {60: 1.0 + 1e-12, 120: 2.5, 180: 3.0, 300: 5.0}}
        # compared: 60 and 120 (180 is null on one side, 240 and 300 on one side only)
        self.assertEqual(bench_render.equal_values(a, b), (1, 2))

    def test_equal_values_renamed_single_series(self):
        a = {"sumSeries(bench.sum.*)": {60: 3.0}}
        b = {"sumSeries(bench.sum.s*)": {60: 3.0}}
        self.assertEqual(bench_render.equal_values(a, b), (1, 1))

    def test_url_of(self):
        u = bench_render.url_of("http://h", {"_path": "/metrics/find", "query": "a.*"})
        self.assertEqual(u, "http://h/metrics/find?query=a.%2A")
        self.assertTrue(bench_render.url_of("http://h", {"target": "x"}).startswith("http://h/render?"))

    def test_vm_args(self):
        args = bench_render.vm_args("/d", 1, 2, 60)
        for want in ("-storageDataPath=/d", "-graphiteListenAddr=127.0.0.1:1", "-httpListenAddr=127.0.0.1:2",
                     "-search.graphiteStorageStep=60s", "-search.disableCache"):
            self.assertIn(want, args)

    def test_vacuum_archives_in_the_parity_database(self):
        calls = []

        class FakePgts:
            def pgts(self, *args):
                calls.append(args)
                return ""
        with redirect_stdout(io.StringIO()), unittest.mock.patch("sys.stderr", io.StringIO()):
            bench_render.vacuum_archives(FakePgts())
        self.assertEqual(calls, [("db", "psql", "-q", "-c", "\\c parity", "-c", "VACUUM ANALYZE pgts.rra_data")])

    def test_table_has_a_column_per_system(self):
        args = argparse.Namespace(glob=2, sum=3, tagged=4, clients=4)
        res = {label: (0.002, 0.003) for label, _ in bench_render.requests(args)}
        vm = {label: (0.001, 0.002) for label, _ in bench_render.requests(args)}
        out = io.StringIO()
        with redirect_stdout(out):
            bench_render.print_table(args, ["pgts", "VictoriaMetrics"], {"pgts": dict(res, rps=10.0),
                                     "VictoriaMetrics": dict(vm, rps=20.0)},
                                     {"VictoriaMetrics": {"one series, 24 h": "1440/1440"}})
        text = out.getvalue()
        self.assertIn("| request | pgts p50 | pgts p99 | VictoriaMetrics p50 | VictoriaMetrics p99 | "
                      "pgts/VictoriaMetrics p50 | VictoriaMetrics answer vs pgts |", text)
        self.assertIn("| one series, 24 h | 2.0 ms | 3.0 ms | 1.0 ms | 2.0 ms | 2.00 | 1440/1440 |", text)
        self.assertIn("| all of the above from 4 clients, requests/s | 10.0 |  | 20.0 |  | 0.50 |  |", text)


@unittest.skipIf(vm_binary() is None, "no victoria-metrics in .bench-tools/bin or /tmp/vmbin: `make bench-tools` builds one")
class VMLifecycle(unittest.TestCase):
    def test_load_render_stop(self):
        with tempfile.TemporaryDirectory() as work:
            now = int(time.time())
            args = argparse.Namespace(glob=3, sum=2, tagged=12, hours=1, every=60)
            spec = bench_render.spec_of(args, now)
            vm = bench_render.VictoriaMetrics(vm_binary(), work, 60)
            try:
                vm.start()
                bench_render.load_vm(vm, spec)
                q = {"target": "bench.glob.s0", "from": str(spec["start"]), "until": str(now), "format": "json"}
                st, body = daemons.http_get(vm.url + "/render?" + urllib.parse.urlencode(q))
                self.assertEqual(st, 200, body)
                got = bench_render.answer_of(body, "/render")
                want = {ts: v for name, pts in bench_render.series_points(spec) if name == "bench.glob.s0" for ts, v in pts}
                eq, n = bench_render.equal_values({"bench.glob.s0": want}, got)
                self.assertEqual((eq, n), (len(want), len(want)), got)
                pid, data = vm.p.pid, vm.data
            finally:
                vm.stop()
            self.assertFalse(os.path.exists(data), "data directory left behind")
            with self.assertRaises(ProcessLookupError):
                os.killpg(pid, 0)


if __name__ == "__main__":
    unittest.main()
