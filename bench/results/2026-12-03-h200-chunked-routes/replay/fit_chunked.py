# Fits the sm90a tier's chunked-region routes (contract tc-k16-c512) to the tuner's times of
# every chunked candidate (tune_nn.json, tune_nt.json, tune_tn.json of this run, beside it):
# per n band and m bucket the kernel of least summed log(time / best), scored leave-one-(n, k)-out.
import json, collections, math, itertools
T = collections.defaultdict(dict)
for op in ['nn', 'nt', 'tn']:
    for x in json.load(open(f'tune_{op}.json'))['measurements']:
        T[(op, x['n'], x['k'], x['m'])][x['kernel']] = x['ms']
shapes = sorted(set((n, k) for _, n, k, _ in T))
buckets = [(1, 16), (17, 32), (33, 64), (65, 128), (129, 256), (257, 512), (513, 1024), (1025, 2048), (2049, 1 << 30)]
M = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
def cells(shs, b):
    return [(op, n, k, m) for op in ['nn', 'nt', 'tn'] for n, k in shs for m in M if b[0] <= m <= b[1] and (op, n, k, m) in T]
def cost(K, cs):
    s = 0
    for c in cs:
        t = T[c]
        if K not in t: return math.inf
        s += math.log(t[K] / min(t.values()))
    return s
def choose(shs, b):
    cs = cells(shs, b); ks = set().union(*(T[c].keys() for c in cs))
    return min(sorted(ks), key=lambda K: cost(K, cs))
def band_of(n, cuts): return sum(1 for c in cuts if n > c)
def evaluate(cuts, b, loo):
    tot = 0; cnt = 0; picks = []
    for i in range(len(cuts) + 1):
        shs = [s for s in shapes if band_of(s[0], cuts) == i]
        if not shs: continue
        picks.append(choose(shs, b))
        for s in shs:
            rest = [x for x in shs if x != s] if loo else shs
            K = choose(rest, b) if rest else picks[-1]
            cs = cells([s], b); c = cost(K, cs)
            if c == math.inf:  # the pick cannot take this k: the band's next best that can
                c = min(cost(K2, cs) for K2 in T[cs[0]])
            tot += c; cnt += len(cs)
    return math.exp(tot / cnt), picks
ns = sorted(set(n for n, _ in shapes))
for b in buckets:
    res = []
    for nc in (0, 1, 2):
        best = None
        for cuts in itertools.combinations(ns[:-1], nc):
            g, picks = evaluate(cuts, b, True)
            if best is None or g < best[0]: best = (g, cuts, picks, evaluate(cuts, b, False)[0])
        res.append('%d cuts: loo %.3f fit %.3f n> %s %s' % (nc, best[0], best[3], list(best[1]), [p.split('.')[1] for p in best[2]]))
    print(b, ' | '.join(res))
