#!/usr/bin/env bash
# Tools the x509/front-proxy tests and benches call: the openssl CLI (test PKI) and curl (a real
# client over real TLS). Idempotent.
set -euo pipefail
need=()
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v curl >/dev/null 2>&1 || need+=(curl)
if ((${#need[@]})); then
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${need[@]}"
fi
# Fuzzing (optional, used by `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz build -s none`).
if [[ "${KUBE_AUTHN_FUZZ:-0}" == "1" ]] && ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked --version 0.13.2
fi
