#!/usr/bin/env bash
# Differential conformance check: runs every vector in conformance/vectors/ through
# k8s.io/apiserver itself (v0.37.2, plus v0.18.19 for the basic-auth and password-file
# authenticators Kubernetes removed in 1.19) and compares the observed outcomes with the
# vectors' Kubernetes expectations. Fails on any difference; prints counts per authenticator.
#
# Self-contained: needs only `go` (modules come from the Go module proxy on first run) and,
# when present, python3 to check that the vectors are what conformance/gen_vectors.py writes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

if ! command -v go >/dev/null 2>&1; then
	echo "conformance: go is not installed; see ci/install-conformance.sh" >&2
	exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if command -v python3 >/dev/null 2>&1 && python3 -c "import cryptography" 2>/dev/null; then
	python3 gen_vectors.py --out "$work/vectors" >/dev/null
	if ! diff -r -q "$work/vectors" vectors >/dev/null; then
		echo "conformance: vectors/ differ from what gen_vectors.py writes; run python3 conformance/gen_vectors.py" >&2
		diff -r -q "$work/vectors" vectors >&2 || true
		exit 1
	fi
elif [ "${KUBE_AUTHN_REQUIRE_TEST_TOOLS:-}" = 1 ]; then
	echo "conformance: python3 with pyca cryptography not found: cannot check that vectors/ is what gen_vectors.py writes (see ci/install-conformance.sh)" >&2
	exit 1
else
	echo "conformance: WARNING: python3 with pyca cryptography not found; NOT checking that vectors/ is what gen_vectors.py writes (see ci/install-conformance.sh)" >&2
fi

echo "== k8s.io/apiserver v0.37.2 oracle"
(cd go && go run ./cmd/oracle -vectors "$here/vectors" >"$work/current.json" 2>"$work/current.log") || {
	cat "$work/current.log" >&2
	exit 1
}
echo "== k8s.io/apiserver v0.18.19 oracle (basic auth, password file)"
(cd go/legacy && go run . -vectors "$here/vectors" >"$work/legacy.json" 2>"$work/legacy.log") || {
	cat "$work/legacy.log" >&2
	exit 1
}
echo "== comparison"
(cd go/vector && go run ./cmd/compare -vectors "$here/vectors" "$work/current.json" "$work/legacy.json")
