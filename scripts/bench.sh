#!/usr/bin/env bash
# Every benchmark lembas keeps (release builds). First the figures a person waits on, measured
# from outside against their goals (`bench_goals.py`: exits non-zero past a goal); then the
# benches of the parts. `scripts/bench.sh --goals` runs the first alone. Figures go in the notes.
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p lembas || exit 1
python3 scripts/bench_goals.py target/release/lembas
goals=$?
if [[ "${1:-}" == "--goals" ]]; then exit $goals; fi
set -e
cargo bench -p lembas --bench cli_run          # start to first request, time per step, peak memory, prompt size
cargo bench -p lembas --bench resume           # resuming a 1,000-step session: first request, peak memory, a step early and late
cargo bench -p lembas --bench team_load        # three subagents × 50 steps side by side: peak memory, time per step
cargo bench -p lembas-tools --bench sandbox    # what the sandbox and the leftover scan cost a command
cargo bench -p lembas-core --bench engine_step # the engine over 1,000 steps: time per step, memory
cargo bench -p lembas-core --bench store_growth # what the store keeps at 1,000 and 10,000 steps, and its write time
cargo bench -p lembas-model --bench sse_throughput
cargo bench -p lembas-tui --bench render       # the terminal UI under 1,000 tokens/s: frames/s, input latency
bash scripts/bench-search.sh                   # glob and grep against ripgrep on 100k files
exit $goals
