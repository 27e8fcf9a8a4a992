# Scores the chunked regions' old and new tier routes against the tuner's times (beside it):
# geometric mean of time / best per m bucket, over every (op, n, k) timed.
import json, collections, math
T = collections.defaultdict(dict)
for op in ['nn', 'nt', 'tn']:
    for x in json.load(open(f'tune_{op}.json'))['measurements']:
        T[(op, x['n'], x['k'], x['m'])][x['kernel']] = x['ms']
def old(m, n, k):
    if n <= 1024:
        if k > 16384:
            return 'dec64s8' if m <= 64 else 'mid64' if m <= 256 else 'mid' if m <= 1024 else 'mid2'
        if m <= 16: return 'dec64s8'
        if m <= 64: return 'mid64s8' if k < 4096 else 'mid64s4'
        return 'mid64' if m <= 256 else 'mid' if m <= 1024 else 'mid2'
    if m <= 16: return 'dec64s8' if n <= 1792 else 'dec64s4'
    if k > 16384: return 'dec64s8' if m <= 64 else 'mid' if m <= 256 else 'mid2'
    return 'mid64s4' if m <= 64 else 'mid' if m <= 256 else 'mid2'
def new(m, n, k):
    # Cuts where the tile count passes one wave of 132 SMs at the bucket's top m.
    if m <= 16: return 'dec64s8' if n <= 1792 else 'dec64s4'
    if m <= 32: return 'dec64s8' if n <= 896 or k > 32768 else 'dec64s4'
    if m <= 64:
        if k > 16384: return 'dec64s8'
        if n <= 896: return 'mid64s8'
        return 'mid64s4' if n <= 1792 else 'mid64'
    if m <= 128: return 'mid64'
    if m <= 256: return 'mid64' if n <= 2048 else 'mid'
    if m <= 512: return 'mid64' if n <= 1024 else 'mid' if n <= 2048 else 'mid2'
    if m <= 1024: return 'mid' if n <= 1024 else 'mid2' if n <= 2048 else 'mid2n192'
    if m <= 2048: return 'mid' if n <= 512 else 'mid2'
    return 'mid2'
def full(name, m):
    return ('tcdecsplit.' if name.startswith('dec') else 'tcwidechunk.') + name
buckets = [(1, 16), (17, 32), (33, 64), (65, 128), (129, 256), (257, 512), (513, 1024), (1025, 2048), (2049, 1 << 30)]
tot = {'old': [], 'new': []}
for b in buckets:
    out = []
    for name, f in (('old', old), ('new', new)):
        ls = []; worst = (1, None)
        for (op, n, k, m), t in T.items():
            if not (b[0] <= m <= b[1]): continue
            r = t[full(f(m, n, k), m)] / min(t.values()); ls.append(math.log(r))
            if r > worst[0]: worst = (r, (op, n, k, m))
        tot[name] += ls
        out.append('%s %.3f (worst %.2f at %s)' % (name, math.exp(sum(ls) / len(ls)), *worst))
    print(b, ' | '.join(out))
for name, ls in tot.items(): print(name, 'all buckets %.3f' % math.exp(sum(ls) / len(ls)))
