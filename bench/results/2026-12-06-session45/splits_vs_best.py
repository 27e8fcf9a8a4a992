"""Each new split's time over the fastest unsplit tile's in a tune's JSON (by op, n, k, m)."""
import json, sys, math, collections
j = json.load(open(sys.argv[1]))
names = sys.argv[2].split(',')
g = collections.defaultdict(dict)
for r in j['measurements']:
    g[(r['op'], r['n'], r['k'], r['m'])][r['kernel'].split('.')[1]] = r['ms']
for name in names:
    rs = []
    for key, d in g.items():
        unsplit = [v for k, v in d.items() if k in ('mid64', 'mid', 'mid2', 'mid2n192', 'mid2ov', 'midov', 'mid64ov')]
        if name in d and unsplit:
            rs.append(d[name] / min(unsplit))
    gm = math.exp(sum(map(math.log, rs)) / len(rs))
    print(f"{name}: {len(rs)} buckets, time over the fastest unsplit tile's: geometric mean {gm:.2f}, range {min(rs):.2f}-{max(rs):.2f}")
