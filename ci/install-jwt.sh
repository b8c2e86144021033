#!/usr/bin/env bash
# Installs what the JWT / service-account / OIDC tests need (idempotent).
#   - Python PyJWT + jwcrypto + cryptography: independent token minting (tests/tools/*.py)
#   - npm oidc-provider (+ jose) into tests/oidc/node_modules, exactly as pinned by
#     tests/oidc/package-lock.json: a real OpenID provider for tests/oidc*.rs (Node >= 20)
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
if ! python3 -c 'import jwt, jwcrypto, cryptography' 2>/dev/null; then
    pip_install 'PyJWT[crypto]>=2.8' 'jwcrypto>=1.5' 'cryptography>=42'
fi
if ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
    echo "install-jwt: oidc-provider 9 needs Node >= 20, found $(node --version)" >&2
    exit 1
fi
if [ ! -d tests/oidc/node_modules/oidc-provider ]; then
    (cd tests/oidc && npm ci --no-audit --no-fund --silent)
fi
echo "install-jwt: ok"
