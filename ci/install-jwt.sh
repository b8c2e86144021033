#!/usr/bin/env bash
# Installs what the JWT / service-account / OIDC tests need (idempotent).
#   - Python PyJWT + jwcrypto + cryptography: independent token minting (tests/tools/*.py)
#   - npm oidc-provider (+ jose) into tests/oidc/node_modules: a real OpenID provider for tests/oidc*.rs
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -c 'import jwt, jwcrypto, cryptography' 2>/dev/null; then
    python3 -m pip install --user --quiet 'PyJWT[crypto]>=2.8' 'jwcrypto>=1.5' 'cryptography>=42' \
        || python3 -m pip install --quiet 'PyJWT[crypto]>=2.8' 'jwcrypto>=1.5' 'cryptography>=42'
fi
if [ -f tests/oidc/package.json ] && command -v npm >/dev/null; then
    if [ ! -d tests/oidc/node_modules/oidc-provider ]; then
        (cd tests/oidc && npm install --no-audit --no-fund --silent)
    fi
fi
echo "install-jwt: ok"
