#!/usr/bin/env python3
# lazy-warmup-cold.py RECORDS TRUTH LAZY_S: counts measured requests in flight across a compiling step
import json, sys
from datetime import datetime
recs_path, truth_path, lazy = sys.argv[1], sys.argv[2], float(sys.argv[3])
def parse_t0(s):
    # RFC 3339 with up to 9 fractional digits
    base, _, frac = s.partition('.')
    tz = ''
    for sep in ('Z', '+', '-'):
        if sep in frac:
            i = frac.index(sep); tz = frac[i:]; frac = frac[:i]; break
    dt = datetime.fromisoformat(base + (tz.replace('Z', '+00:00') or '+00:00'))
    return int(dt.timestamp()) * 10**9 + int((frac or '0').ljust(9, '0')[:9])
lines = open(recs_path).read().splitlines()
hdr = json.loads(lines[0])['servebench_header']
t0 = parse_t0(hdr['start'])
comp = []
for l in open(truth_path):
    e = json.loads(l)
    if e.get('kind') == 'compile':
        comp.append(e['written_ns'])
cold = measured = warm = 0
last_warm_done = 0
first_meas = None
for l in lines[1:]:
    r = json.loads(l)
    if 'phase' not in r: continue
    s, d = t0 + r.get('sent', 0), t0 + r.get('done', 0)
    if r['phase'] != 'measure':
        warm += 1; last_warm_done = max(last_warm_done, d); continue
    measured += 1
    first_meas = s if first_meas is None else min(first_meas, s)
    if any(s < end and d > end - lazy * 1e9 for end in comp):
        cold += 1
after = sum(1 for end in comp if first_meas is not None and end > first_meas)
print(f"warmup={warm} measured={measured} cold_measured={cold} compiles={len(comp)} compiles_after_first_measured_send={after}")
