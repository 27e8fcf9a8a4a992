"""Each new tile's time over its twin's, and over the fastest other candidate's, in a tune's
JSON, by m (geometric means over op, n, k); and where it would be the fastest. The pairs are
`tile:twin,...` (argument 2), by default call 3's deeper rings; call 6 passed the slotted splits
without the fence: mid64s2nf:mid64s2,mid64s4dnf:mid64s4d,mid2s4nf:mid2s4."""
import json, sys, math, collections
j = json.load(open(sys.argv[1]))
g = collections.defaultdict(dict)
for r in j['measurements']:
    g[(r['op'], r['n'], r['k'], r['m'])][r['kernel'].split('.')[1]] = r['ms']
pairs = sys.argv[2] if len(sys.argv) > 2 else 'mid64d:mid64,mid64c2d:mid64,midd:mid,mid64s2d:mid64s2'
new = dict(p.split(':') for p in pairs.split(','))
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float('nan')
for t, twin in new.items():
    by_m = collections.defaultdict(lambda: ([], []))
    wins = []
    for key, d in g.items():
        if t not in d:
            continue
        rest = [v for k, v in d.items() if k not in new]
        if twin in d:
            by_m[key[3]][0].append(d[t] / d[twin])
        if rest:
            by_m[key[3]][1].append(d[t] / min(rest))
            if d[t] < min(rest):
                wins.append((key, round(min(rest) / d[t], 3)))
    print(f"{t}: over {twin} / over the fastest other, by m: " +
          ", ".join(f"{m}: {gm(a):.3f} / {gm(b):.3f}" for m, (a, b) in sorted(by_m.items())))
    print(f"  fastest of all in {len(wins)}: " + " ".join(f"{k[0]} {k[1]}x{k[2]} m={k[3]} {w}" for k, w in sorted(wins)))
