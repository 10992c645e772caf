#!/usr/bin/env python3
import json, sys
# scripts/sweep-saturation.py SWEEP.jsonl...: one line per sweep file (a Markdown table row): the throughput point's req/s as the tool reports it (sweep-end line),
# and the server's own completion rate at that point:
#  meas  = completions of the measured requests between the 4th and the 36th (n-4th), records' done times
#  all   = every completion of the point, warmup too, 4th to (n-4)th
#  load = FILE.load's first word if present (e.g. `cut -d' ' -f1-3 /proc/loadavg > FILE.load` after the sweep)
#  /metrics = llamacpp:tokens_predicted_total slope / output tokens between scrapes with requests_processing >= 4
slots = 4  # the llama.cpp peer's -np 4
print("| file | load avg (1 min) at end | tool req/s | server, measured 4th→36th | ratio | server, all 80 (warmup too) | ratio | server /metrics | ratio |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sys.argv[1:]:
    run = 0; recs = []; tel = []; tput = None
    for l in open(f):
        d = json.loads(l)
        if 'servebench_run_end' in d: run += 1; continue
        if 'servebench_sweep_end' in d:
            for p in d['servebench_sweep_end']['points']:
                if p['label'].startswith('throughput'): tput = p['request_throughput']
            continue
        if 'servebench_telemetry' in d and run == 1: tel.append(d['servebench_telemetry']); continue
        if 'id' in d and run == 1 and d.get('status') == 200: recs.append(d)
    def rate(rs):
        e = sorted(r['done'] / 1e9 for r in rs); n = len(e); a, b = slots - 1, n - 1 - slots
        return (b - a) / (e[b] - e[a])
    m = [r for r in recs if r['phase'] == 'measure']
    pts = []
    for t in tel:
        s = {x['name']: x.get('value') for x in t.get('series', [])}
        if 'llamacpp:tokens_predicted_total' in s:
            pts.append((t['t'] / 1e9, s['llamacpp:tokens_predicted_total'], s.get('llamacpp:requests_processing', 0)))
    sat = [p for p in pts if p[2] >= slots]
    out = sum(r['output_tokens'] for r in recs) / len(recs)
    met = (sat[-1][1] - sat[0][1]) / out / (sat[-1][0] - sat[0][0]) if len(sat) >= 2 else float('nan')
    rm, ra = rate(m), rate(recs)
    la = open(f.replace('.jsonl', '.load')).read().split()[0] if __import__('os').path.exists(f.replace('.jsonl', '.load')) else '?'
    print(f"| {f.split('/')[-1]} | {la} | {tput:.2f} | {rm:.2f} | {tput/rm:.2f} | {ra:.2f} | {tput/ra:.2f} | {met:.2f} | {tput/met:.2f} |")
