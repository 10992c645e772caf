#!/bin/sh
# lazy-warmup-matrix.sh DIR N LAZY [run flags...]: N runs, each against a fresh `servebench sim --lazy-compile LAZY`
# (a separate process on 127.0.0.1:$PORT, 22001 unless set), 8 users, random prompt and output lengths, seed i
tag=$1; n=$2; lazy=$3; shift 3
port=${PORT:-22001}
secs=$(echo $lazy | sed "s/ms$/e-3/;s/s$//")
for i in $(seq 1 $n); do
  d=$tag; mkdir -p $d; rm -f $d/truth$i.jsonl $d/r$i.jsonl
  ${SERVEBENCH:-servebench} sim --addr 127.0.0.1:$port --lazy-compile $lazy --truth $d/truth$i.jsonl >/dev/null 2>&1 &
  pid=$!
  for k in $(seq 50); do curl -sf 127.0.0.1:$port/health >/dev/null 2>&1 && break; sleep 0.1; done
  ${SERVEBENCH:-servebench} run -q --url http://127.0.0.1:$port --concurrency 8 --requests 200 \
     --input-dist lognormal:512,256 --output-dist lognormal:128,64 --seed $i -o $d/r$i.jsonl "$@" > $d/out$i.txt 2>&1
  rc=$?
  kill $pid; wait $pid 2>/dev/null
  v=$(grep -oE "^(steady|quality) +[A-Za-z]+" $d/out$i.txt | tr -s ' ' | tr '\n' ' ')
  echo "run $i rc=$rc $(python3 "$(dirname "$0")/lazy-warmup-cold.py" $d/r$i.jsonl $d/truth$i.jsonl $secs) $v"
done
