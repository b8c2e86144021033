#!/usr/bin/env bash
# Prepares a machine for conformance/run.sh and conformance/bench.sh (idempotent).
# Go is expected on the project's machines (installed from Debian when missing); this fetches the Go modules
# (k8s.io/apiserver v0.37.2 and v0.18.19 and their dependencies) from the Go module proxy, so
# the first `run.sh` does not spend its time downloading. python3 is used to check that
# conformance/vectors/ is what conformance/gen_vectors.py writes, and by bench.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

. "$root/ci/lib.sh"
if ! command -v go >/dev/null 2>&1; then
	# Debian's Go is older than the 1.26 k8s.io/apiserver v0.37 requires; with GOTOOLCHAIN=auto
	# it fetches the newer toolchain from the module proxy on first use (`go env -w` records
	# that for every later go command: Debian's go.env may say `local`).
	apt_install golang-go || {
		echo "install-conformance: go is not installed; install Go >= 1.26 (https://go.dev/dl/)" >&2
		exit 1
	}
	go env -w GOTOOLCHAIN=auto
fi
if ! command -v python3 >/dev/null 2>&1; then
	apt_install python3 || exit 1
fi
# gen_vectors.py mints the x509, request-header and service-account material with pyca
# cryptography (>= 44 for deterministic ECDSA in CertificateBuilder.sign).
if ! python3 -c 'import cryptography, sys; sys.exit(int(cryptography.__version__.split(".")[0]) < 44)' 2>/dev/null; then
	pip_install 'cryptography>=44'
fi
for dir in conformance/go/vector conformance/go conformance/go/legacy; do
	(cd "$root/$dir" && go mod download)
done
# Compile k8s.io/apiserver into Go's build cache now, one build at a time: the test that builds
# cmd/webhookclient (tests/serve_authn.rs) then only links, instead of compiling for a minute
# beside timing-sensitive tests.
(cd "$root/conformance/go" && go build ./cmd/...)
echo "install-conformance: ready ($(go version))"
