#!/bin/sh
# How often a run is called INVALID by the prefix-cache note, over real HTTP: the built-in
# simulator as its own process (prefix cache on), open-loop Poisson arrivals, lengths uniform
# ±50%, the default --seed in every invocation (docs/metrics.md "INVALID by a warning").
#   fresh: the default --nonce; every exit 7 is a false alarm
#   off:   --nonce off after one priming invocation; every exit 7 is a detection
# usage: scripts/invalid-matrix.sh fresh|off [N] [PORT]   (needs ./servebench or $SB)
set -u
MODE=$1 N=${2:-30} PORT=${3:-23002}
SB=${SB:-./servebench}
DIR=$(mktemp -d)
$SB sim --addr 127.0.0.1:$PORT >"$DIR/sim.log" 2>&1 &
SIM=$!
trap 'kill $SIM; rm -rf "$DIR"' EXIT
sleep 1
flag=""
[ "$MODE" = off ] && flag="--nonce off"
one() {
	$SB run -q --url http://127.0.0.1:$PORT --rate 40 --requests 40 --input-tokens 256 --output-tokens 8 \
		--range-ratio 0.5 $flag -o "$DIR/$1.jsonl" --force >/dev/null 2>&1
}
[ "$MODE" = off ] && one prime
inv=0
for i in $(seq 1 "$N"); do
	one "$i"
	[ $? -eq 7 ] && inv=$((inv + 1))
done
echo "$MODE: $inv of $N invocations INVALID (exit 7)"
