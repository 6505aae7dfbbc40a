#!/usr/bin/env bash
# glob and grep on a generated 100,000-file tree against ripgrep (installed here when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v rg >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq ripgrep
fi
cargo bench -p lembas-tools --bench search_tree
