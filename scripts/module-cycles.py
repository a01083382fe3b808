#!/usr/bin/env python3
"""Circles between the files of a crate's `src/`: which files import each other, directly or
round a loop, through `crate::` paths (tests modules and comments left out). Prints each
circle (a strongly connected set of files), largest first; exits 0 either way.

    scripts/module-cycles.py [crates/server/src]
"""
import os, re, sys
os.chdir(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "crates", "server", "src"))
files={}
for root,_,fs in os.walk('.'):
    for f in fs:
        if f.endswith('.rs'): files[os.path.join(root,f)[2:]]=1
def mod_of(path):
    p=path[:-3]
    if p.endswith('/mod'): p=p[:-4]
    return p.split('/')
def resolve(parts):
    # deepest file matching prefix
    for n in range(len(parts),0,-1):
        pre='/'.join(parts[:n])
        for cand in (pre+'.rs', pre+'/mod.rs'):
            if cand in files: return cand
    return None
g={}
for f in files:
    txt=open(f).read()
    i=txt.find('#[cfg(test)]\nmod tests')
    if i>=0: txt=txt[:i]
    txt='\n'.join(l for l in txt.split('\n') if not l.strip().startswith('//'))
    deps=set()
    for m in re.findall(r'crate::((?:[a-z_0-9]+::)*[a-z_0-9A-Z]+)',txt):
        t=resolve(m.split('::'))
        if t and t!=f: deps.add(t)
    # use crate::x::{a, b} forms
    for m in re.findall(r'crate::((?:[a-z_0-9]+::)+)\{([^}]*)\}',txt):
        base=m[0].rstrip(':').split('::')
        for item in m[1].split(','):
            item=item.strip().split(' ')[0].split('::')[0]
            if item and item!='self':
                t=resolve(base+[item])
                if t and t!=f: deps.add(t)
    g[f]=deps
# SCC (Tarjan)
sys.setrecursionlimit(10000)
index={};low={};st=[];on=set();sccs=[];c=[0]
def sc(v):
    index[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in g.get(v,()):
        if w not in index: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],index[w])
    if low[v]==index[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        if len(comp)>1: sccs.append(comp)
for v in list(g):
    if v not in index: sc(v)
for comp in sorted(sccs,key=len,reverse=True):
    print(len(comp), sorted(comp)[:60])
