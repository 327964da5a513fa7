"""bench/flamescope's FlameScope side: FlameScope's own Flask app, called
in-process through Flask's test client (no socket), on one perf script text.

    driver.py FLAMESCOPE DIR NAME COUNT START END [START END ...]

FLAMESCOPE is a checkout of Netflix/flamescope; DIR holds examples/NAME, the
plain text (FlameScope reads its files from PROFILE_DIR, "examples" under the
working directory). The driver prints, one "key value..." line each:

    samples N                 non-idle samples in FlameScope's heatmap
    first WALL CPU BYTES      GET /heatmap/?filename=NAME&type=perf&rows=50, the
                              request FlameScope's page makes when a file is
                              opened: read, parse, offset heatmap and its JSON
    flame S E cold WALL CPU BYTES
                              the first GET /flamegraph/ of [S, E] (seconds from
                              the first whole second), which also scans the
                              whole file for its time range and line index
    flame S E warm WALL CPU   the median of COUNT further requests

Times are seconds; CPU is this process's (FlameScope is one thread). The
interpreter's start-up, the imports and the file list (GET /profile/, which
the page shows before a file is opened) are not counted, as a running
FlameScope server has done them. The third-party nflxprofile package, which
FlameScope imports for its own binary format only, is replaced by a stub when
it is absent, and a line "note ..." says so.
"""

import os
import statistics
import sys
import time
import types


def stub_nflxprofile():
    """Stands in for nflxprofile (not in Debian), never called for perf text."""

    def absent(name):
        def fail(*args, **kwargs):
            raise RuntimeError("nflxprofile is not installed: %s" % name)

        return fail

    pkg = types.ModuleType("nflxprofile")
    pkg.__path__ = []
    pb2 = types.ModuleType("nflxprofile.nflxprofile_pb2")
    pb2.Profile = absent("Profile")
    graph = types.ModuleType("nflxprofile.flamegraph")
    for name in ("get_flame_graph", "NodeJsStackProcessor", "StackProcessor", "NodeJsPackageStackProcessor"):
        setattr(graph, name, absent(name))
    pkg.nflxprofile_pb2 = pb2
    pkg.flamegraph = graph
    sys.modules.update({"nflxprofile": pkg, "nflxprofile.nflxprofile_pb2": pb2, "nflxprofile.flamegraph": graph})


def timed(client, url):
    """Returns wall and CPU seconds of GET url and the answer's length."""
    w, c = time.perf_counter(), time.process_time()
    res = client.get(url)
    body = res.get_data()
    w, c = time.perf_counter() - w, time.process_time() - c
    if res.status_code != 200:
        sys.exit("flamescope: GET %s answered %d: %s" % (url, res.status_code, body[:300]))
    return w, c, len(body), res


def main(argv):
    if len(argv) < 6 or len(argv) % 2:
        sys.exit("usage: driver.py FLAMESCOPE DIR NAME COUNT START END [START END ...]")
    root, workdir, name, count = argv[0], argv[1], argv[2], int(argv[3])
    ranges = [(argv[i], argv[i + 1]) for i in range(4, len(argv), 2)]
    if not os.path.isfile(os.path.join(root, "app", "perf", "flame_graph.py")):
        sys.exit("flamescope: %s is not a FlameScope checkout (no app/perf/flame_graph.py)" % root)
    sys.path.insert(0, os.path.abspath(root))
    try:
        import nflxprofile  # noqa: F401
    except ImportError:
        stub_nflxprofile()
        print("note nflxprofile absent: stubbed (FlameScope uses it for nflxprofile files only)")
    os.chdir(workdir)  # FlameScope's PROFILE_DIR is "examples", relative
    from app import APP

    client = APP.test_client()
    timed(client, "/profile/")  # the file list FlameScope's page shows first; not counted
    w, c, n, res = timed(client, "/heatmap/?filename=%s&type=perf&rows=50" % name)
    heat = res.get_json()
    print("samples %d" % sum(sum(col) for col in heat["values"]))
    print("columns %d" % len(heat["columns"]))
    print("first %.6f %.6f %d" % (w, c, n))
    for s, e in ranges:
        url = "/flamegraph/?filename=%s&type=perf&flavor=standard" % name
        if s != "" or e != "":
            url += "&start=%s&end=%s" % (s, e)
        w, c, n, _ = timed(client, url)
        print("flame %s %s cold %.6f %.6f %d" % (s or "-", e or "-", w, c, n))
        walls, cpus = [], []
        for _ in range(count):
            w, c, _, _ = timed(client, url)
            walls.append(w)
            cpus.append(c)
        print("flame %s %s warm %.6f %.6f" % (s or "-", e or "-", statistics.median(walls), statistics.median(cpus)))


if __name__ == "__main__":
    main(sys.argv[1:])
