"""Times Python searoute on the pairs of pairs.txt and compares it with our Rust router.

    python compare.py python --pairs pairs.txt --pairs-json OUT_PAIRS --out OUT_JSON [--repeat N]
    python compare.py report PYTHON_JSON RUST_JSON

`python` resolves the UN/LOCODEs with the ports.geojson shipped inside the searoute
package (the same list as crates/geo/data/ports.tsv), writes the coordinates for the Rust
side, and times searoute() per pair. `report` prints both side by side. Run by run.sh.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def run_python(args):
    # Cold graph load: import plus building both networkx graphs, as a first call pays.
    t0 = time.perf_counter()
    import searoute as sr

    sr.setup_M()
    sr.setup_P()
    load_seconds = time.perf_counter() - t0

    ports_file = Path(sr.__file__).parent / "data" / "ports.geojson"
    ports = {}
    for f in json.loads(ports_file.read_text())["features"]:
        # Some codes appear twice; keep the first, as crates/geo/data/ports.tsv does.
        ports.setdefault(f["properties"]["port"], f["geometry"]["coordinates"])

    pairs = []
    for line in Path(args.pairs).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        a, b = line.split()[:2]
        pairs.append({"from": a, "to": b, "from_coord": ports[a], "to_coord": ports[b]})
    Path(args.pairs_json).write_text(json.dumps(pairs))

    routes = []
    for p in pairs:
        # append_orig_dest adds the straight legs from the points to the network, as ours do.
        call = lambda: sr.searoute(p["from_coord"], p["to_coord"], append_orig_dest=True)
        call()  # warm-up
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            feature = call()
            times.append(time.perf_counter() - t)
        routes.append(
            {
                "from": p["from"],
                "to": p["to"],
                "km": feature["properties"]["length"],
                # The median, as on the Rust side: robust to other jobs on the machine.
                "seconds": statistics.median(times),
            }
        )
    version = getattr(sr, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version

        version = dist_version("searoute")
    out = {"searoute_version": version, "load_seconds": load_seconds, "routes": routes}
    Path(args.out).write_text(json.dumps(out))


def report(args):
    py = json.loads(Path(args.python_json).read_text())
    rs = json.loads(Path(args.rust_json).read_text())
    print(f"searoute {py['searoute_version']} (Python {sys.version.split()[0]}) vs tidemark-geo")
    print(
        f"graph load: Python {py['load_seconds'] * 1e3:.0f} ms (import + build), "
        f"Rust best {rs['load_seconds_best'] * 1e3:.1f} ms, mean {rs['load_seconds_mean'] * 1e3:.1f} ms"
    )
    print()
    print(f"{'pair':<13} {'python km':>10} {'rust km':>10} {'diff %':>7} {'python ms':>10} {'rust µs':>9} {'speed-up':>9}")
    ratios, diffs = [], []
    py_total = rs_total = 0.0
    for p, r in zip(py["routes"], rs["routes"]):
        assert (p["from"], p["to"]) == (r["from"], r["to"]), "pair lists differ"
        diff = (r["km"] - p["km"]) / p["km"] * 100
        ratio = p["seconds"] / r["seconds"]
        ratios.append(ratio)
        diffs.append(abs(diff))
        py_total += p["seconds"]
        rs_total += r["seconds"]
        print(
            f"{p['from']}-{p['to']:<7} {p['km']:>10.1f} {r['km']:>10.1f} {diff:>+7.3f} "
            f"{p['seconds'] * 1e3:>10.2f} {r['seconds'] * 1e6:>9.1f} {ratio:>8.0f}x"
        )
    n = len(ratios)
    print()
    print(
        f"{n} pairs: Python {py_total * 1e3:.1f} ms, Rust {rs_total * 1e3:.2f} ms in total "
        f"(mean {py_total / n * 1e3:.2f} ms vs {rs_total / n * 1e6:.1f} µs per route)"
    )
    print(
        f"speed-up: {py_total / rs_total:.0f}x on the total; per pair median "
        f"{statistics.median(ratios):.0f}x, min {min(ratios):.0f}x, max {max(ratios):.0f}x"
    )
    print(
        f"length difference: max {max(diffs):.3f} %, mean {statistics.mean(diffs):.3f} %; "
        f"{sum(d < 1 for d in diffs)}/{n} pairs within 1 %"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("python")
    p.add_argument("--pairs", required=True)
    p.add_argument("--pairs-json", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--repeat", type=int, default=7)
    r = sub.add_parser("report")
    r.add_argument("python_json")
    r.add_argument("rust_json")
    args = parser.parse_args()
    run_python(args) if args.command == "python" else report(args)


if __name__ == "__main__":
    main()
