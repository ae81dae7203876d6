"""cuth's layer CSV map against a HotSpot grid_steady file (.gz or plain),
sampled at HotSpot's 64 x 64 cell centres over the die (die at x 23.8 mm,
y 23.62 mm in cuth's 60 mm domain). Usage: python3 bench/hotspot/mapdiff.py CUTH.csv HS.grid.steady[.gz] LAYER"""
import sys, gzip

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0)
def _open(p):
    return gzip.open(p, 'rt') if p.endswith('.gz') else open(p)
def cuth_csv(p):
    L=open(p).read().split('\n')
    xs=[float(v) for v in L[0].split(',')[1:]]; ys=[float(v) for v in L[1].split(',')[1:]]
    rows=[[float(v) for v in l.split(',')] for l in L[2:] if l.strip()]
    return xs,ys,rows
def hs_grid(p,layer):
    out=[];cur=None
    for line in _open(p):
        if line.startswith('Layer'): cur=int(line.split()[1].rstrip(':'))
        elif cur==layer: out.append(float(line.split()[1]))
    return out
xs,ys,rows=cuth_csv(sys.argv[1]); hs=hs_grid(sys.argv[2],int(sys.argv[3]))
x0,y0,W,H=23.8,23.62,12.4,12.76
def near(arr,v,desc=False):
    best=min(range(len(arr)),key=lambda k:abs(arr[k]-v)); return best
d=[]
for i in range(64):
    for j in range(64):
        x=x0+(j+0.5)*W/64; y=y0+H-(i+0.5)*H/64
        c=rows[near(ys,y)][near(xs,x)]
        d.append((c-hs[i*64+j],i,j,c,hs[i*64+j]))
vals=[t[0] for t in d]
print('cuth - hotspot at HotSpot cell centres: mean %.2f min %.2f max %.2f'%(sum(vals)/len(vals),min(vals),max(vals)))
print('cuth mean %.2f  hotspot mean %.2f'%(sum(t[3] for t in d)/4096,sum(t[4] for t in d)/4096))
print('cuth max %.2f hotspot max %.2f'%(max(t[3] for t in d),max(t[4] for t in d)))
for q in [(0,32,0,32,'top-left'),(0,32,32,64,'top-right'),(32,64,0,32,'bottom-left'),(32,64,32,64,'bottom-right')]:
    s=[t[0] for t in d if q[0]<=t[1]<q[1] and q[2]<=t[2]<q[3]]
    print(q[4],'mean %.2f min %.2f max %.2f'%(sum(s)/len(s),min(s),max(s)))
edge=[t[0] for t in d if t[1] in (0,63) or t[2] in (0,63)]; centre=[t[0] for t in d if 24<=t[1]<40 and 24<=t[2]<40]
print('die edge ring mean %.2f, centre mean %.2f'%(sum(edge)/len(edge),sum(centre)/len(centre)))
d.sort()
for t in d[:5]+d[-3:]: print('diff %.2f at row %d col %d (x %.2f y %.2f mm in die): cuth %.2f hs %.2f'%(t[0],t[1],t[2],(t[2]+0.5)*W/64,H-(t[1]+0.5)*H/64,t[3],t[4]))
