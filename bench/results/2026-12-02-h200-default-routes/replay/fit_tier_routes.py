# Fits the sm90a tier's own routes to a tune report's times: run beside tune_nn.json (the
# run2-6489520-tune-nn report, decompressed). Prints, per m, the tier's old cuts against 1-3
# piece n/k rules chosen per region, with leave-one-(n, k)-out scores.
import json,collections,math,itertools
d=json.load(open('tune_nn.json'))
ms=d['measurements']
T=collections.defaultdict(dict)
for x in ms: T[(x['n'],x['k'],x['m'])][x['kernel']]=x['ms']
chunk=set((x['n'],x['k']) for x in ms if 'chunk' in x['kernel'] or 'split' in x['kernel'])
shapes=sorted(set((x['n'],x['k']) for x in ms)-chunk)
print(len(shapes),'non-chunk shapes')
cands=['tcdec.dec32','tcdec.dec64','tcdec.dec16','tcwide.mid','tcwide.mid64','tcwide.mid2','tcwide.wide','tcwide.pp256','tcwide.pp256c2','tcwide.pp128','tcwide.mid192','tcwide.mid2n192','tcwide.pp192']
buckets=[(1,16),(17,64),(65,256),(257,1024),(1025,1<<30)]
def tier(m,n,k):
    if m<=16: return 'tcdec.dec64' if n>=8192 else 'tcdec.dec32'
    if m<=64: return 'tcwide.mid64' if n<=8191 else 'tcwide.mid'
    if m<=256: return 'tcwide.mid2' if n>=8192 else 'tcwide.mid'
    if m<=1024 and n<=2047: return 'tcwide.mid'
    if n<=8191: return 'tcwide.mid2'
    return 'tcwide.wide'
def score(rule,bk,shs):
    lo,hi=bk; s=0;c=0
    for (n,k) in shs:
        for m in [1,8,16,32,64,128,256,512,1024,2048,4096]:
            if not(lo<=m<=hi): continue
            t=T[(n,k,m)]; best=min(t[c2] for c2 in cands if c2 in t)
            s+=math.log(t[rule(m,n,k)]/best); c+=1
    return math.exp(s/c)

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
