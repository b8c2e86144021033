#!/usr/bin/env bash
# Installs what the test suite needs beyond the Rust toolchain. Idempotent; safe to rerun.
# Every helper script ci/install-*.sh next to this one is run too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# Python: the official Kubernetes client (a real client for the server tests) and JWT minting.
if ! python3 -c 'import kubernetes, jwt, jwcrypto' 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check 'kubernetes>=30' 'PyJWT[crypto]>=2.8' 'jwcrypto>=1.5'
fi

for extra in "$here"/install-*.sh; do
  [ "$extra" = "$here/install-test-tools.sh" ] && continue
  [ -f "$extra" ] || continue
  echo "== $extra"
  bash "$extra"
done
