#!/usr/bin/env bash
# Tools the `mw` branch needs beyond cargo: cargo-fuzz for fuzz/ (build with
# `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz build -s none`). Idempotent.
set -euo pipefail
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked --version 0.13.2
fi
