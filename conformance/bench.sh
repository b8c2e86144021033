#!/usr/bin/env bash
# Runs k8s.io/apiserver's authenticators (Go testing.B, conformance/go/bench and
# conformance/go/legacy) and kube-authn's criterion benches on the same work, one after the
# other on this machine, and writes docs/performance.md: operation, Go ns/op, kube-authn
# ns/op, ratio. Rows are listed in conformance/bench-map.tsv; a row whose criterion bench is
# not in benches/ yet is listed as pending.
#
#   conformance/bench.sh            # Go -benchtime 1s; criterion --warm-up-time 1 --measurement-time 3
#   GO_BENCHTIME=3s conformance/bench.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
benchtime="${GO_BENCHTIME:-1s}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

command -v go >/dev/null || { echo "bench: go is not installed" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench: python3 is needed to write the table" >&2; exit 1; }

go_cmd="go test -run '^\$' -bench . -benchmem -cpu 1 -benchtime $benchtime"
echo "== Go: $go_cmd (conformance/go/bench, conformance/go/legacy)"
(cd "$here/go" && go test -run '^$' -bench . -benchmem -cpu 1 -benchtime "$benchtime" ./bench) | tee "$work/go.txt"
(cd "$here/go/legacy" && go test -run '^$' -bench . -benchmem -cpu 1 -benchtime "$benchtime" .) | tee -a "$work/go.txt"

rust_cmd="cargo bench --bench <name> -- --warm-up-time 1 --measurement-time 3"
: >"$work/rust.tsv"
for bench in $(grep -v '^#' "$here/bench-map.tsv" | cut -f4 | sort -u); do
	if [ ! -f "$root/benches/$bench.rs" ]; then
		echo "== Rust: benches/$bench.rs does not exist yet (pending)"
		continue
	fi
	echo "== Rust: cargo bench --bench $bench -- --warm-up-time 1 --measurement-time 3"
	marker="$work/marker-$bench"
	touch "$marker"
	sleep 1
	(cd "$root" && cargo bench --bench "$bench" -- --warm-up-time 1 --measurement-time 3)
	# Every criterion result this run wrote: <bench>\t<id>\t<mean ns>. The id is criterion's
	# full benchmark id from new/benchmark.json (`oidc/RS256/…`, the form a filter takes), not
	# the result directory's name (`oidc_RS256/…`, with a group's `/` spelled `_`).
	(cd "$root/target/criterion" && find . -path '*/new/estimates.json' -newer "$marker" -print) | while read -r f; do
		dir="$root/target/criterion/${f%/estimates.json}"
		python3 -c 'import json,sys; d=sys.argv[1]; print(json.load(open(d + "/benchmark.json"))["full_id"], json.load(open(d + "/estimates.json"))["mean"]["point_estimate"], sep="\t")' "$dir" |
			while IFS=$'\t' read -r id mean; do
				printf '%s\t%s\t%s\n' "$bench" "$id" "$mean" >>"$work/rust.tsv"
			done
	done
done

cpu="$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
cores="$(nproc)"
python3 "$here/bench_table.py" "$here/bench-map.tsv" "$work/go.txt" "$work/rust.tsv" "$root/docs/performance.md" "$cpu" "$cores" "$go_cmd" "$rust_cmd"

# Header notes bench_table.py does not write: inserted after its "* Ratio = " line.
python3 - "$root/docs/performance.md" <<'NOTES'
import sys
path = sys.argv[1]
notes = """\
* Ids are criterion's benchmark ids, the form a filter takes: `cargo bench --bench oidc --
  'oidc/RS256/'` runs the `oidc/RS256/…` rows. Criterion's result directories spell a group's
  `/` as `_` (`target/criterion/oidc_RS256/…`).
* The kube-authn figures of `static_token` and `basic_auth` (ids `bearer_token_file/…`,
  `token_file/…`, `digest/…`, `basic_password_file/…`, `password_file/…`) are on-CPU: those
  benches use a criterion measurement of the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`).
  Every other figure, Go's ns/op included, is wall time, which on a shared machine also counts
  time spent waiting for a core; so the static-token and basic-auth ratios compare kube-authn's
  CPU time with Go's wall time.
"""
lines = open(path).read().splitlines(keepends=True)
at = next((i for i, l in enumerate(lines) if l.startswith("* Ratio = ")), None)
if at is None:
    sys.exit("bench: no '* Ratio = ' line in docs/performance.md to put the header notes after")
lines.insert(at + 1, notes)
open(path, "w").write("".join(lines))
NOTES
