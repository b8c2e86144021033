#!/usr/bin/env bash
# Tools the `files` branch's tests need: a Go toolchain for the differential test of the CSV
# reader against Go's own encoding/csv (src/csv.rs, differential_against_go_encoding_csv).
# Idempotent.
set -euo pipefail
if ! command -v go >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq golang-go
  else
    echo "install Go (https://go.dev/dl/) for the CSV differential test" >&2
    exit 1
  fi
fi
go version
# cargo-fuzz for fuzz/ (token_csv, password_csv).
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --version 0.13.2
fi
