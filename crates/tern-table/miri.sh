#!/usr/bin/env bash
# Runs tern-table's unit tests under Miri (the property tests are ignored
# there: too slow interpreted). Needs `rustup component add --toolchain
# nightly miri rust-src`.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec cargo +nightly miri test -p tern-table --lib "$@"
