#!/bin/sh
# Installs lembas for you (no root): the release archive for this computer, its SHA-256 checked
# against the release manifest — or, when no release fits (or with --from-source), a build from
# this source tree with cargo. Then shell completions, and lembas on your PATH.
#
#   sh install.sh [--url MANIFEST_URL] [--bin-dir DIR] [--from-source]
#
# MANIFEST_URL: LEMBAS_UPDATE_URL, else lembas' own releases (the manifest `lembas update`
# reads; docs/install.md). DIR: LEMBAS_BIN_DIR, else ~/.local/bin.
set -eu

url=${LEMBAS_UPDATE_URL:-https://lembas.dev/releases/latest.json}
bin_dir=${LEMBAS_BIN_DIR:-$HOME/.local/bin}
from_source=0
while [ $# -gt 0 ]; do
  case $1 in
    --url) url=$2; shift 2 ;;
    --bin-dir) bin_dir=$2; shift 2 ;;
    --from-source) from_source=1; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

say() { printf '%s\n' "$*"; }
fail() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

case $(uname -m) in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
  *) arch=$(uname -m) ;;
esac
case $(uname -s) in
  Linux) os=linux ;;
  Darwin) os=macos ;;
  *) os=$(uname -s | tr '[:upper:]' '[:lower:]') ;;
esac
platform=$arch-$os

fetch() { # URL FILE
  if command -v curl >/dev/null 2>&1; then curl -fsSL --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then wget -q -O "$2" "$1"
  else fail "neither curl nor wget is installed"; fi
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$bin_dir"

# The release for this platform: "<platform>": {"url": …, "sha256": …} in the manifest.
from_release() {
  fetch "$url" "$work/manifest.json" || return 1
  flat=$(tr -d ' \t\r\n' < "$work/manifest.json")
  entry=$(printf '%s' "$flat" | sed -n "s/.*\"$platform\":{\([^}]*\)}.*/\1/p")
  [ -n "$entry" ] || { say "No release for $platform in $url."; return 1; }
  archive=$(printf '%s' "$entry" | sed -n 's/.*"url":"\([^"]*\)".*/\1/p')
  want=$(printf '%s' "$entry" | sed -n 's/.*"sha256":"\([0-9a-fA-F]*\)".*/\1/p')
  case $archive in
    *://*) ;;
    *) archive=${url%/*}/$archive ;;
  esac
  version=$(printf '%s' "$flat" | sed -n 's/.*"version":"\([^"]*\)".*/\1/p')
  say "Downloading lembas $version for $platform…"
  fetch "$archive" "$work/lembas.tar.gz" || fail "the download of $archive failed"
  got=$(sha256 "$work/lembas.tar.gz")
  [ "$got" = "$want" ] || fail "the download's SHA-256 ($got) is not the manifest's ($want): refused"
  mkdir "$work/unpacked"
  tar -xzf "$work/lembas.tar.gz" -C "$work/unpacked"
  found=$(find "$work/unpacked" -maxdepth 2 -type f -name lembas | head -n 1)
  [ -n "$found" ] || fail "the archive holds no lembas program"
  for program in lembas lembas-sandbox lembas-reader; do
    if [ -f "$(dirname "$found")/$program" ]; then
      cp "$(dirname "$found")/$program" "$work/$program.new"
      chmod 755 "$work/$program.new"
      mv -f "$work/$program.new" "$bin_dir/$program"
    fi
  done
}

from_source() {
  here=$(cd "$(dirname "$0")" && pwd)
  [ -f "$here/crates/lembas/Cargo.toml" ] || fail "no release fits $platform: run install.sh from a copy of lembas' source to build it"
  command -v cargo >/dev/null 2>&1 || fail "building lembas needs Rust's cargo (https://rustup.rs), then run install.sh again"
  say "Building lembas from $here with cargo (a few minutes)…"
  cargo install --locked --quiet --path "$here/crates/lembas" --root "$work/built"
  for program in lembas lembas-sandbox lembas-reader; do
    cp "$work/built/bin/$program" "$work/$program.new"
    mv -f "$work/$program.new" "$bin_dir/$program"
  done
}

if [ "$from_source" = 1 ] || ! from_release; then
  from_source
fi
say "Installed $bin_dir/lembas."

# Shell completions, where each shell looks for a person's own.
data=${XDG_DATA_HOME:-$HOME/.local/share}
config=${XDG_CONFIG_HOME:-$HOME/.config}
mkdir -p "$data/bash-completion/completions"
"$bin_dir/lembas" completions bash > "$data/bash-completion/completions/lembas"
if command -v zsh >/dev/null 2>&1; then
  mkdir -p "$data/zsh/site-functions"
  "$bin_dir/lembas" completions zsh > "$data/zsh/site-functions/_lembas"
fi
if command -v fish >/dev/null 2>&1; then
  mkdir -p "$config/fish/completions"
  "$bin_dir/lembas" completions fish > "$config/fish/completions/lembas.fish"
fi

# On the PATH: said in ~/.profile when the folder is not on it yet.
case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *)
    line="export PATH=\"$bin_dir:\$PATH\""
    if ! grep -qsF "$line" "$HOME/.profile"; then
      printf '\n# lembas\n%s\n' "$line" >> "$HOME/.profile"
      say "Added $bin_dir to your PATH in ~/.profile (open a new terminal, or run: $line)."
    fi
    ;;
esac

say "Done. Now run: lembas login"
