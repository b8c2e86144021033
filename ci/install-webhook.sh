#!/usr/bin/env bash
# Tools for the webhook branch's tests (idempotent).
# - Debian's OpenStack Keystone, used by tests/keystone.rs `real_keystone` (SQLite, stdlib WSGI
#   server; no services are enabled or started by this script).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if ! [ -x /usr/bin/keystone-manage ] || ! [ -x /usr/bin/keystone-wsgi-public ]; then
    apt_install python3-keystone
fi
