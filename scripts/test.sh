#!/usr/bin/env bash
# The one test command: builds the workspace, runs every Rust test, builds
# and installs the tern-client Python package, then the redis-py
# compatibility suite (and the differential check against the reference
# redis-server when one is installed) and tern_client's tests against the
# debug binary.
#
# Needs only the Rust toolchain and Python 3; installs the rest itself into
# .venv, which later runs reuse. Exits non-zero on the first failing stage.
#
#   scripts/test.sh                 everything
#   scripts/test.sh -k expire       extra arguments go to pytest
#   TERN_MIRI=0 scripts/test.sh     everything but the Miri run of tern-table
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
VENV="$ROOT/.venv"
REQ="$ROOT/tests/python/requirements.txt"

section() { printf '\n==================== %s ====================\n' "$*"; }
note() { printf '[test.sh] %s\n' "$*"; }
is_root() { [ "$(id -u)" = 0 ]; }

apt_install() {
    # Debian without python3-venv / python3-pip (or redis-server): install
    # when we can, i.e. as root with apt-get present. Never prompts (CI has no stdin).
    is_root && command -v apt-get >/dev/null 2>&1 || return 1
    export DEBIAN_FRONTEND=noninteractive
    if [ -z "${_APT_UPDATED:-}" ]; then
        apt-get update -qq </dev/null >/dev/null 2>&1 || true
        _APT_UPDATED=1
    fi
    apt-get install -y -qq --no-install-recommends "$@" </dev/null >/dev/null 2>&1
}

venv_works() { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -m pip --version >/dev/null 2>&1; }

make_venv() {
    venv_works && return 0
    rm -rf "$VENV"
    if python3 -m venv "$VENV" >/dev/null 2>&1 && venv_works; then return 0; fi
    rm -rf "$VENV"
    note "python3 -m venv failed (no ensurepip?); trying apt-get install python3-venv"
    local pyver
    pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    if apt_install python3-venv "python${pyver}-venv" || apt_install python3-venv; then
        if python3 -m venv "$VENV" >/dev/null 2>&1 && venv_works; then return 0; fi
        rm -rf "$VENV"
    fi
    note "trying virtualenv"
    if ! python3 -m virtualenv --version >/dev/null 2>&1; then
        python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip || true
        python3 -m pip install -q --user virtualenv >/dev/null 2>&1 ||
            python3 -m pip install -q --user --break-system-packages virtualenv >/dev/null 2>&1 || true
    fi
    if python3 -m virtualenv -q "$VENV" >/dev/null 2>&1 && venv_works; then return 0; fi
    rm -rf "$VENV"
    return 1
}

# Sets PY to the interpreter that has the pinned requirements.
setup_python() {
    if make_venv; then
        PY="$VENV/bin/python"
        local stamp="$VENV/.requirements.sha256" want
        want=$(sha256sum "$REQ" | cut -d' ' -f1)
        if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
            "$PY" -m pip install -q --disable-pip-version-check -r "$REQ"
            echo "$want" >"$stamp"
        else
            note "reusing $VENV (requirements unchanged)"
        fi
    else
        # Last resort: the user site of the system interpreter.
        note "no virtualenv possible; installing into the user site"
        PY=python3
        python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip || true
        python3 -m pip install -q --disable-pip-version-check --user -r "$REQ" ||
            python3 -m pip install -q --disable-pip-version-check --user --break-system-packages -r "$REQ"
    fi
    "$PY" -c 'import redis, pytest; print("redis-py", redis.__version__, "/ pytest", pytest.__version__)'
}

section "cargo build --workspace"
cargo build --workspace

section "cargo test --workspace"
cargo test --workspace

section "python environment"
setup_python
if ! command -v redis-server >/dev/null 2>&1; then
    note "redis-server not on PATH; trying apt-get install redis-server for the differential check"
    apt_install redis-server || note "could not install redis-server: the differential check will be skipped"
fi
if ! command -v memcached >/dev/null 2>&1 && [ ! -x /usr/bin/memcached ]; then
    note "memcached not installed; trying apt-get install memcached for the memcached differential check"
    apt_install memcached || note "could not install memcached: the memcached differential check will be skipped"
fi

section "tern-client python package (pip install ./python)"
# Built by maturin (fetched from PyPI into pip's build environment) from
# python/ and crates/tern-client; python/target keeps the Rust build between runs.
if [ "$PY" = python3 ]; then
    python3 -m pip install -q --disable-pip-version-check --user ./python ||
        python3 -m pip install -q --disable-pip-version-check --user --break-system-packages ./python
else
    "$PY" -m pip install -q --disable-pip-version-check ./python
fi
"$PY" -c 'import tern_client; print("tern_client from", tern_client.__file__)'

section "pytest tests/python (redis-py against target/debug/tern-server)"
export TERN_BIN="${TERN_BIN:-$ROOT/target/debug/tern-server}"
"$PY" -m pytest tests/python -p no:cacheprovider -ra "$@"

section "miri: tern-table's unit tests (its unsafe code; tern-lua's bridge calls C, which Miri cannot run)"
# Interpreted, so a few minutes; TERN_MIRI=0 skips it. Needs a nightly
# toolchain with the miri component: added when rustup can, skipped (with a
# note) on a machine that has only the stable toolchain.
if [ "${TERN_MIRI:-1}" = 0 ]; then
    note "TERN_MIRI=0: skipped"
elif ! cargo +nightly --version >/dev/null 2>&1; then
    note "no nightly toolchain: Miri skipped"
elif ! cargo +nightly miri --version >/dev/null 2>&1 &&
    ! rustup component add --toolchain nightly miri rust-src >/dev/null 2>&1; then
    note "nightly has no miri component and rustup could not add it: Miri skipped"
else
    bash crates/tern-table/miri.sh
fi

section "all tests passed"
