# Scores the sm90a tier's own tensor-core routes at m >= 1024 (what every (n, k) off the tuned list
# runs) against 1-3 piece rules on n, k or n*k fitted to a tune report's times of every tcwide
# candidate, with leave-one-(n, k)-out scores: geometric mean of the chosen kernel's time over the
# fastest candidate's (1.000 is always the fastest). Run: python3 fit_tier_routes.py tune_nn.json
import json,collections,math,itertools,sys
d=json.load(open(sys.argv[1]))  # a tune report (tune_nn.json)
ms=d['measurements']
T=collections.defaultdict(dict)
for x in ms: T[(x['n'],x['k'],x['m'])][x['kernel']]=x['ms']
chunk=set((x['n'],x['k']) for x in ms if 'chunk' in x['kernel'] or 'split' in x['kernel'])
shapes=sorted(set((x['n'],x['k']) for x in ms)-chunk)
cands=['tcwide.mid','tcwide.mid64','tcwide.mid2','tcwide.wide','tcwide.pp256','tcwide.pp256c2','tcwide.pp128','tcwide.mid192','tcwide.mid2n192','tcwide.pp192','tcwide.widec2','tcwide.sq192','tcwide.sq192c2']
Ms=sorted(set(x['m'] for x in ms))
def tier(m,n,k):
    if m<=1024: return 'tcwide.mid' if n<=1024 else 'tcwide.mid2'
    return 'tcwide.mid2' if n<=8191 else 'tcwide.wide'
L={}
for (n,k) in shapes:
    for m in Ms:
        t=T[(n,k,m)]; best=min(t[c] for c in cands if c in t)
        for c in cands:
            if c in t: L[(c,n,k,m)]=math.log(t[c]/best)
            else: L[(c,n,k,m)]=9
def region_cost(shs,mset,K): return sum(L[(K,n,k,m)] for n,k in shs for m in mset)
feats={'n':lambda s:s[0],'k':lambda s:s[1],'nk':lambda s:s[0]*s[1]}
def fit(shs,mset,npieces,minsh=4,keys=('n',)):
    best=None
    for key in keys:
        f=feats[key]; vals=sorted(set(f(s) for s in shs))
        for ths in itertools.combinations(vals[:-1],npieces-1):
            regs=[[] for _ in range(npieces)]
            for s in shs: regs[sum(1 for t in ths if f(s)>t)].append(s)
            if any(len(r)<minsh for r in regs): continue
            cost=0;ks=[]
            for r in regs:
                K=min(cands,key=lambda K:region_cost(r,mset,K)); ks.append(K); cost+=region_cost(r,mset,K)
            if best is None or cost<best[0]: best=(cost,key,ths,ks)
    return best
def apply(rule,s):
    cost,key,ths,ks=rule; return ks[sum(1 for t in ths if feats[key](s)>t)]
def cv(mset,npieces,keys):
    tot=0;c=0
    for s in shapes:
        rest=[x for x in shapes if x!=s]; r=fit(rest,mset,npieces,keys=keys)
        K=apply(r,s); tot+=sum(L[(K,s[0],s[1],m)] for m in mset); c+=len(mset)
    return math.exp(tot/c)
print(len(shapes),'shapes', Ms)
for mset in [[m] for m in Ms]+[Ms[1:]]:
    cur=math.exp(sum(L[(tier(m,n,k),n,k,m)] for n,k in shapes for m in mset)/(len(shapes)*len(mset)))
    out=['tier %.3f'%cur]
    for npc in (1,2,3):
        r=fit(shapes,mset,npc,keys=('n','k','nk'))
        out.append('%dp fit %.3f cv %.3f [%s %s %s]'%(npc,math.exp(r[0]/(len(shapes)*len(mset))),cv(mset,npc,('n','k','nk')),r[1],r[2],r[3]))
    print(mset,'\n   '+'\n   '.join(out)); sys.stdout.flush()
