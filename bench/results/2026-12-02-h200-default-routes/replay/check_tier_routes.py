# Scores the shipped rules (prop) against the old cuts (tier) on tune reports: python3 check_tier_routes.py tune_nn.json tune_nt.json tune_tn.json
import json,collections,math,sys
def tier(m,n,k):
    if m<=16: return 'tcdec.dec64' if n>=8192 else 'tcdec.dec32'
    if m<=64: return 'tcwide.mid64' if n<=8191 else 'tcwide.mid'
    if m<=256: return 'tcwide.mid2' if n>=8192 else 'tcwide.mid'
    if m<=1024 and n<=2047: return 'tcwide.mid'
    if n<=8191: return 'tcwide.mid2'
    return 'tcwide.wide'
def prop(m,n,k):
    if 17<=m<=32 and n<=6144: return 'tcdec.dec32'
    if 65<=m<=128:
        return 'tcwide.mid64' if n<=4096 else ('tcwide.pp128' if n<=8192 else 'tcwide.mid2')
    if 129<=m<=256: return 'tcwide.mid' if n<=4096 else 'tcwide.mid2'
    if 257<=m<=1024: return 'tcwide.mid' if n<=1024 else 'tcwide.mid2'
    return tier(m,n,k)
for fn in sys.argv[1:]:
    d=json.load(open(fn)); T=collections.defaultdict(dict)
    for x in d['measurements']: T[(x['n'],x['k'],x['m'])][x['kernel']]=x['ms']
    chunk=set((x['n'],x['k']) for x in d['measurements'] if 'chunk' in x['kernel'] or 'split' in x['kernel'])
    shapes=sorted(set((x['n'],x['k']) for x in d['measurements'])-chunk)
    cands=set(c for v in T.values() for c in v if c.startswith('tcwide') or c.startswith('tcdec.dec') and 'deep' not in c)
    ms=sorted(set(x['m'] for x in d['measurements']))
    print(fn, len(shapes), sorted(cands))
    for m in ms:
        a=b=0;c=0
        for n,k in shapes:
            t=T[(n,k,m)]
            if prop(m,n,k) not in t or tier(m,n,k) not in t: continue
            best=min(t[x] for x in cands if x in t)
            a+=math.log(t[tier(m,n,k)]/best); b+=math.log(t[prop(m,n,k)]/best); c+=1
        print('  m=%d tier %.3f prop %.3f (%d)'%(m,math.exp(a/c),math.exp(b/c),c))
