#!/usr/bin/env python3
"""Re-verify this set: every reference span, sources.json hashes; print counts per kind and per file."""
import collections, csv, hashlib, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {'single': 1, 'rule_exception': 2, 'context': 1}
errors = []

src = json.load(open(os.path.join(HERE, 'sources.json'), encoding='utf-8'))
corpora = {}
for f in src['files']:
    p = os.path.join(HERE, 'corpora', f['corpus_id'] + '.md')
    b = open(p, 'rb').read()
    with open(p, encoding='utf-8', newline='') as fh:
        t = fh.read()
    corpora[f['corpus_id']] = t
    if len(t) != f['chars']:
        errors.append(f"{f['corpus_id']}: chars {len(t)} != {f['chars']}")
    if hashlib.sha256(b).hexdigest() != f['sha256']:
        errors.append(f"{f['corpus_id']}: sha256 mismatch")
on_disk = {n[:-3] for n in os.listdir(os.path.join(HERE, 'corpora')) if n.endswith('.md')}
if on_disk != set(corpora):
    errors.append(f'corpora/ and sources.json disagree: {sorted(on_disk ^ set(corpora))}')

per_kind = collections.Counter()
per_file = collections.defaultdict(collections.Counter)
questions = set()
with open(os.path.join(HERE, 'questions.csv'), encoding='utf-8', newline='') as fh:
    rows = list(csv.DictReader(fh))
for i, r in enumerate(rows, 2):
    cid, kind, q = r['corpus_id'], r['kind'], r['question']
    if q in questions:
        errors.append(f'line {i}: duplicate question')
    questions.add(q)
    if cid not in corpora:
        errors.append(f'line {i}: unknown corpus_id {cid}'); continue
    if kind not in KINDS:
        errors.append(f'line {i}: bad kind {kind}'); continue
    refs = json.loads(r['references'])
    if len(refs) != KINDS[kind]:
        errors.append(f'line {i}: {kind} has {len(refs)} references')
    t = corpora[cid]
    for ref in refs:
        s, e, c = ref['start_index'], ref['end_index'], ref['content']
        if t[s:e] != c:
            errors.append(f'line {i}: corpus[{s}:{e}] != content')
        if t.find(c) != s or t.find(c, s + 1) != -1:
            errors.append(f'line {i}: span not unique / find() != start_index')
    if len(refs) == 2 and refs[0]['start_index'] < refs[1]['end_index'] and refs[1]['start_index'] < refs[0]['end_index']:
        errors.append(f'line {i}: overlapping references')
    per_kind[kind] += 1
    per_file[cid][kind] += 1

print(f'files: {len(corpora)}  questions: {len(rows)}  chars: {sum(map(len, corpora.values()))}')
print('per kind:', dict(per_kind))
print(f"{'corpus_id':70} single rule_exc context total")
for cid in sorted(corpora):
    c = per_file[cid]
    print(f"{cid:70} {c['single']:6} {c['rule_exception']:8} {c['context']:7} {sum(c.values()):5}")
if errors:
    print(f'FAIL: {len(errors)} problem(s)'); [print('  ' + e) for e in errors]; sys.exit(1)
print('OK: all references verified')
