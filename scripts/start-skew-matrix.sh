#!/bin/sh
# How the merge judges the shards' start skew, over real HTTP: the built-in simulator as its
# own process, two shard processes of one open-loop run (Poisson arrivals, lengths uniform
# ±50%, a fresh seed per trial), merged by servebench report (docs/scale-out.md "The start
# skew of a merge").
#   same:  both shards given one --start-at; every note above info is a false alarm
#   apart: the second shard's --start-at APART later (default 1s, about 17% of the merged
#          window); a note above info is a detection
# Prints each trial's skew note level and figure, then the counts.
# usage: scripts/start-skew-matrix.sh same|apart [N] [PORT] [APART]   (needs ./servebench or $SB)
set -u
MODE=$1 N=${2:-20} PORT=${3:-23003} APART=${4:-1}
SB=${SB:-./servebench}
DIR=$(mktemp -d)
$SB sim --addr 127.0.0.1:$PORT >"$DIR/sim.log" 2>&1 &
SIM=$!
trap 'kill $SIM; rm -rf "$DIR"' EXIT
sleep 1
gap=0
[ "$MODE" = apart ] && gap=$APART
info=0 distorts=0 invalid=0 none=0
for i in $(seq 1 "$N"); do
	now=$(date +%s)
	at0=$(date -u -d "@$((now + 3))" +%Y-%m-%dT%H:%M:%SZ)
	at1=$(date -u -d "@$((now + 3 + gap))" +%Y-%m-%dT%H:%M:%SZ)
	pids=""
	for k in 0 1; do
		at=$at0
		[ $k -eq 1 ] && at=$at1
		$SB run -q --url http://127.0.0.1:$PORT --rate 40 --requests 200 --input-tokens 64 --output-tokens 16 \
			--range-ratio 0.5 --seed "$i" --shard $k/2 --start-at "$at" -o "$DIR/s$k.jsonl" --force >/dev/null 2>&1 &
		pids="$pids $!"
	done
	wait $pids
	note=$($SB report "$DIR/s0.jsonl" "$DIR/s1.jsonl" 2>&1 | grep -o "[a-z ]*: shards' start skew [0-9.]* m\?s.*window" | head -1)
	echo "$i: $note"
	case "$note" in
	*info:*) info=$((info + 1)) ;;
	*distort*) distorts=$((distorts + 1)) ;;
	*invalidates:*) invalid=$((invalid + 1)) ;;
	*) none=$((none + 1)) ;;
	esac
done
echo "$MODE: $N trials: info $info, may distort $distorts, invalidates $invalid, no note $none"
