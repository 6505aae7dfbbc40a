#!/usr/bin/env bash
# Re-makes crates/lembas/layout/hot.ld, the list of functions a release build of lembas places
# side by side: the scripted task (read, edit, command, answer) and a resume of it, run under
# callgrind on a build that keeps its symbols; then what valgrind cannot run, from the page faults of
# runs outside it (perf). Needs valgrind, perf, nm and python3. Run it after a
# change of dependencies or of the compiler (their symbols' hashes change); between, a function
# added or renamed is only placed among the rest. See docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
CARGO_PROFILE_RELEASE_STRIP=none cargo build --release -p lembas --bins
cargo build -p lembas-testkit --bin lembas-fake-model
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/proj/.git" "$work/home"
echo "print('helo')" > "$work/proj/main.py"
cat > "$work/script.json" <<'JSON'
[{"kind":"reply","tool_calls":[{"id":"c1","name":"read","arguments":"{\"path\":\"main.py\"}"}]},
 {"kind":"reply","tool_calls":[{"id":"c2","name":"edit","arguments":"{\"path\":\"main.py\",\"old_string\":\"helo\",\"new_string\":\"hello\"}"}]},
 {"kind":"reply","tool_calls":[{"id":"c3","name":"bash","arguments":"{\"command\":\"cat main.py\"}"}]},
 {"kind":"reply","text":"Fixed the typo."},
 {"kind":"reply","tool_calls":[{"id":"c1","name":"read","arguments":"{\"path\":\"main.py\"}"}]},
 {"kind":"reply","tool_calls":[{"id":"c2","name":"edit","arguments":"{\"path\":\"main.py\",\"old_string\":\"helo\",\"new_string\":\"hello\"}"}]},
 {"kind":"reply","tool_calls":[{"id":"c3","name":"bash","arguments":"{\"command\":\"cat main.py\"}"}]},
 {"kind":"reply","text":"Fixed the typo."},
 {"kind":"reply","tool_calls":[{"id":"c4","name":"grep","arguments":"{\"pattern\":\"hello\"}"}]},
 {"kind":"reply","text":"It prints hello."}]
JSON
target/debug/lembas-fake-model "$work/script.json" > "$work/fake.out" &
for _ in $(seq 100); do [ -s "$work/fake.out" ] && break; sleep 0.05; done
url=$(head -1 "$work/fake.out")
lembas="$root/target/release/lembas"
echo -n key | LEMBAS_HOME="$work/home" "$lembas" login --key-stdin "$url" > /dev/null
profile() {
    (cd "$work/proj" && LEMBAS_HOME="$work/home" valgrind --tool=callgrind --demangle=no --dump-instr=no \
        --trace-children=no --callgrind-out-file="$work/cg.$1" "$lembas" run --mode auto "${@:2}" > /dev/null 2>&1)
}
# The task twice (what a run does varies a little with timing), then a resume.
profile new "fix the typo in main.py"
echo "print('helo')" > "$work/proj/main.py"
profile again "fix the typo in main.py"
profile resumed --continue "what does it print?"
layout() {
    python3 scripts/layout.py "$work/cg.new+$work/cg.again" "$work/cg.resumed" --binary "$lembas" \
        --out crates/lembas/layout/hot.ld "$@"
}
layout
# What valgrind does not run (a command's process, started by a clone it cannot follow; code
# chosen by the CPU's features): the task run outside it, on a build laid out by the list so
# far, adds the functions whose code faulted. A fault brings in the 64 KB around it, so each
# round shows one function of each such piece; rounds go on until one adds nothing.
for _ in $(seq 8); do cat <<'JSON'; done | python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in sys.stdin]))' > "$work/native.json"
{"kind":"reply","tool_calls":[{"id":"c1","name":"read","arguments":"{\"path\":\"main.py\"}"}]}
{"kind":"reply","tool_calls":[{"id":"c2","name":"edit","arguments":"{\"path\":\"main.py\",\"old_string\":\"helo\",\"new_string\":\"hello\"}"}]}
{"kind":"reply","tool_calls":[{"id":"c3","name":"bash","arguments":"{\"command\":\"cat main.py\"}"}]}
{"kind":"reply","text":"Fixed the typo."}
JSON
target/debug/lembas-fake-model "$work/native.json" > "$work/native.out" &
for _ in $(seq 100); do [ -s "$work/native.out" ] && break; sleep 0.05; done
mkdir -p "$work/native-home"
echo -n key | LEMBAS_HOME="$work/native-home" "$lembas" login --key-stdin "$(head -1 "$work/native.out")" > /dev/null
faults=()
for round in 1 2 3 4; do
    CARGO_PROFILE_RELEASE_STRIP=none cargo build --release -p lembas --bins
    echo "print('helo')" > "$work/proj/main.py"
    (cd "$work/proj" && LEMBAS_HOME="$work/native-home" perf record -q -e page-faults:u -c 1 -d \
        -o "$work/pf.$round" "$lembas" run --mode auto "fix the typo in main.py" > /dev/null 2>&1)
    perf script -i "$work/pf.$round" --no-demangle -F pid,ip,sym,addr,dso > "$work/faults.$round" 2> /dev/null
    faults+=("$work/faults.$round")
    before=$(cksum < crates/lembas/layout/hot.ld)
    layout --faults "${faults[@]}"
    [ "$before" = "$(cksum < crates/lembas/layout/hot.ld)" ] && break
done
echo "Now build the release as usual (this build kept its symbols): cargo build --release -p lembas"
