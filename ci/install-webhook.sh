#!/usr/bin/env bash
# Tools for the webhook branch's tests (idempotent).
# - Debian's OpenStack Keystone, used by tests/keystone.rs `real_keystone` (SQLite, stdlib WSGI
#   server; no services are enabled or started by this script).
set -euo pipefail
if ! [ -x /usr/bin/keystone-manage ] || ! [ -x /usr/bin/keystone-wsgi-public ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends python3-keystone >/dev/null
fi
