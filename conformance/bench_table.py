#!/usr/bin/env python3
"""Writes docs/performance.md from Go benchmark output and criterion results (called by bench.sh)."""
import datetime, re, subprocess, sys
mapfile, gofile, rustfile, out, cpu, cores, go_cmd, rust_cmd = sys.argv[1:9]
go = {}
for line in open(gofile):
    m = re.match(r"^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+(\d+) B/op\s+(\d+) allocs/op)?", line)
    if m:
        go[m.group(1)] = (float(m.group(2)), m.group(3), m.group(4))
rust = {}
for line in open(rustfile):
    bench, ident, mean = line.rstrip("\n").split("\t")
    rust.setdefault(bench, []).append((ident, float(mean)))

def fmt(ns):
    if ns >= 1e6: return f"{ns/1e6:.2f} ms"
    if ns >= 1e3: return f"{ns/1e3:.2f} µs"
    return f"{ns:.1f} ns"

rows, notes, unmatched = [], [], []
used = set()
for line in open(mapfile):
    if line.startswith("#") or not line.strip():
        continue
    cols = line.rstrip("\n").split("\t")
    cols += [""] * (6 - len(cols))
    op, _, gobench, rbench, regex, note = cols
    g = go.get(gobench)
    gcell = fmt(g[0]) if g else "missing"
    if g and g[1] is not None:
        gcell += f" ({g[1]} B, {g[2]} allocs)"
    results = rust.get(rbench)
    if results is None:
        rows.append(f"| {op} | {gcell} | pending (`benches/{rbench}.rs` does not exist yet) | – | |")
        continue
    matches = []
    for alternative in regex.split(" || "):
        matches = [(i, m) for i, m in results if re.search(alternative, i)]
        if len(matches) == 1:
            break
    if len(matches) != 1:
        rows.append(f"| {op} | {gcell} | {len(matches)} criterion results match `{regex}` in `{rbench}` – fix conformance/bench-map.tsv | – | |")
        continue
    ident, mean = matches[0]
    used.add((rbench, ident))
    if rbench == "jwt" and "oidc" not in ident.lower():
        op += " (Rust figure: the JWT authenticator in `benches/jwt.rs`, until an OIDC bench exists)"
    if not g:
        rows.append(f"| {op} | missing | {fmt(mean)} (`{ident}`) | – | |")
        continue
    ratio = g[0] / mean
    ahead = ratio > 1.0
    verdict = note if ahead else f"**not ahead**: {note or 'REASON TO BE WRITTEN in conformance/bench-map.tsv'}"
    rows.append(f"| {op} | {gcell} | {fmt(mean)} (`{ident}`) | {ratio:.2f}× | {verdict} |")
for bench, results in sorted(rust.items()):
    for ident, mean in results:
        if (bench, ident) not in used:
            unmatched.append(f"| `{bench}` | `{ident}` | {fmt(mean)} |")

try:
    load = open("/proc/loadavg").read().split()[:3]
    load_text = f"load average {', '.join(load)} when the table was written"
except OSError:
    load_text = "load average unknown"
rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
doc = f"""# Performance: kube-authn against k8s.io/apiserver

Written by `conformance/bench.sh` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC at commit `{rev}`.
Do not edit by hand; rerun the script.

* Machine: {cpu}, {cores} cores; {load_text}. Both sides ran one after the other on the same
  machine, so ratios are fairer than absolute figures; with other jobs running, treat single
  figures as ±20 % or worse.
* Go: `{go_cmd}` in `conformance/go` (k8s.io/apiserver v0.37.2) and `conformance/go/legacy`
  (v0.18.19, basic auth only); the benchmarks are in `conformance/go/bench/bench_test.go`.
* kube-authn: `{rust_cmd}`, mean of criterion's `target/criterion/<id>/new/estimates.json`.
* Ratio = Go time / kube-authn time: above 1 means kube-authn is faster.
* Each row is the same work on both sides (see the comment on each Go benchmark and the
  criterion bench it is paired with in `conformance/bench-map.tsv`).

| operation | k8s.io/apiserver (Go) | kube-authn (Rust) | ratio | |
|---|---|---|---|---|
""" + "\n".join(rows) + "\n"
if unmatched:
    doc += "\nOther criterion results from the same benches (not paired with a Go benchmark):\n\n| bench | id | mean |\n|---|---|---|\n" + "\n".join(unmatched) + "\n"
doc += """
## Notes on the Go side

* Go `bearertoken`, `headerrequest` and the filter delete the credential headers on success,
  so those benchmarks restore the header map entry each iteration (one map assignment).
* The OIDC benchmarks use a static key set, as k8s' own `oidc_test.go` does; kube-apiserver's
  remote key set runs the same go-jose verification once the JWKS is cached.
* The token cache is k8s' `token/cache` with kube-apiserver's 10 s success TTL; the key is an
  HMAC-SHA256 over the token and the request's audiences.
"""
open(out, "w").write(doc)
print(f"wrote {out}")
