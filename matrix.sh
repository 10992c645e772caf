#!/bin/sh
# INVALID (prefix-cache warning) over real HTTP: a simulator as its own process (prefix cache
# on, its default engine model), open-loop Poisson arrivals, lengths uniform ±50%, the default
# --seed in every invocation. Mode fresh: the default nonce (false alarms = exits 7); mode off:
# --nonce off after one priming invocation (detections = exits 7).
URL=http://127.0.0.1:23002; N=${N:-30}; MODE=$1
SB=/tmp/fresh/servebench
flag=""; [ "$MODE" = off ] && flag="--nonce off"
[ "$MODE" = off ] && $SB run -q --url $URL --rate 40 --requests 40 --input-tokens 256 --output-tokens 8 --range-ratio 0.5 $flag -o /tmp/fresh/m-prime.jsonl --force >/dev/null 2>&1
inv=0
for i in $(seq 1 $N); do
  $SB run -q --url $URL --rate 40 --requests 40 --input-tokens 256 --output-tokens 8 --range-ratio 0.5 $flag -o /tmp/fresh/m-$MODE-$i.jsonl --force >/dev/null 2>&1
  [ $? -eq 7 ] && inv=$((inv+1))
done
echo "$MODE: $inv of $N invocations INVALID (exit 7)"
