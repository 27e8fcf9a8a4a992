exec(open('an.py').read().split('for bk in buckets:')[0])
import sys
Mall=[1,8,16,32,64,128,256,512,1024,2048,4096]
L={}
for (n,k) in shapes:
    for m in Mall:
        t=T[(n,k,m)]; best=min(t[c] for c in cands)
        for c in cands: L[(c,n,k,m)]=math.log(t[c]/best)
def region_cost(shs,mset,K): return sum(L[(K,n,k,m)] for n,k in shs for m in mset)
def fit(shs,mset,npieces,minsh=4,keys=('n',)):
    # thresholds on n (or on n*k 'size'); greedy kernel per region
    best=None
    feats={'n':lambda s:s[0],'k':lambda s:s[1],'nk':lambda s:s[0]*s[1]}
    for key in keys:
        f=feats[key]; vals=sorted(set(f(s) for s in shs))
        for ths in itertools.combinations(vals[:-1],npieces-1):
            regs=[[] for _ in range(npieces)]
            for s in shs:
                i=sum(1 for t in ths if f(s)>t); regs[i].append(s)
            if any(len(r)<minsh for r in regs): continue
            cost=0;ks=[]
            for r in regs:
                K=min(cands,key=lambda K:region_cost(r,mset,K)); ks.append(K); cost+=region_cost(r,mset,K)
            if best is None or cost<best[0]: best=(cost,key,ths,ks)
    return best
def apply(rule,s):
    cost,key,ths,ks=rule; f={'n':s[0],'k':s[1],'nk':s[0]*s[1]}[key]
    return ks[sum(1 for t in ths if f>t)]
def cv(mset,npieces,keys):
    tot=0;c=0
    for s in shapes:
        rest=[x for x in shapes if x!=s]; r=fit(rest,mset,npieces,keys=keys)
        K=apply(r,s); tot+=sum(L[(K,s[0],s[1],m)] for m in mset); c+=len(mset)
    return math.exp(tot/c)
groups=[[1,8,16],[32],[64],[128],[256],[512],[1024],[2048],[4096]]
for mset in groups:
    cur=math.exp(sum(L[(tier(m,n,k),n,k,m)] for n,k in shapes for m in mset)/(len(shapes)*len(mset)))
    out=['tier %.3f'%cur]
    for npc in (1,2,3):
        r=fit(shapes,mset,npc,keys=('n','k','nk'))
        out.append('%dp fit %.3f cv %.3f [%s %s %s]'%(npc,math.exp(r[0]/(len(shapes)*len(mset))),cv(mset,npc,('n','k','nk')),r[1],r[2],r[3]))
    print(mset,' | '.join(out)); sys.stdout.flush()
