# Writes the scenarios of plan --disrupt tests (run from this directory: python3 generate.py).
# The catalog is a slice of ../instance-types.json in two zones, spot at 40% of on-demand.
import json, os
big = {x['name']: x for x in json.load(open('../instance-types.json'))}
names = ['m5.large','m5.xlarge','m5.2xlarge','m5.4xlarge','c5.large','c5.xlarge','c5.2xlarge','r5.large','r5.xlarge','r5.2xlarge','m6i.large','m6i.xlarge','c6i.large','c6i.xlarge']
cat = []
for n in names:
    e = dict(big[n])
    od = e['offerings'][0]['price']
    offs = []
    for z in ['us-east-1a', 'us-east-1b']:
        offs.append({'zone': z, 'capacityType': 'on-demand', 'price': od, 'available': True})
        offs.append({'zone': z, 'capacityType': 'spot', 'price': round(od * 0.4, 4), 'available': True})
    e['offerings'] = offs
    cat.append(e)
with open('instance-types.json', 'w') as f:
    f.write('[\n' + ',\n'.join(json.dumps(e, sort_keys=True) for e in cat) + '\n]\n')

def node(name, pool, itype, zone='us-east-1a', ct='on-demand'):
    taints = [{'key': 'dedicated', 'value': pool, 'effect': 'NoSchedule'}] if pool in ('limited', 'batch', 'flex', 'steady') else []
    e = big[itype]
    labels = dict(e['labels'])
    labels.update({'karpenter.sh/nodepool': pool, 'karpenter.sh/initialized': 'true', 'karpenter.sh/registered': 'true',
                   'karpenter.sh/capacity-type': ct, 'node.kubernetes.io/instance-type': itype,
                   'topology.kubernetes.io/zone': zone, 'kubernetes.io/hostname': name,
                   'karpenter.k8s.aws/ec2nodeclass': 'default'})
    a = e['allocatable']; c = e['capacity']
    return {'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': name, 'labels': labels},
            'spec': {'providerID': 'aws:///%s/i-%s' % (zone, name), 'taints': taints},
            'status': {'capacity': {'cpu': '%dm' % c['cpuMillis'], 'memory': '%dMi' % c['memoryMiB'], 'pods': str(c['pods'])},
                       'allocatable': {'cpu': '%dm' % a['cpuMillis'], 'memory': '%dMi' % a['memoryMiB'], 'pods': str(a['pods'])},
                       'conditions': [{'type': 'Ready', 'status': 'True'}]}}

def pod(name, node, cpu, mem, app=None, ns='default', annotations=None, daemon=False, tolerate=None):
    app = app or name
    owner = {'apiVersion': 'apps/v1', 'kind': 'ReplicaSet', 'name': app + '-rs', 'uid': app + '-rs', 'controller': True}
    if daemon:
        owner = {'apiVersion': 'apps/v1', 'kind': 'DaemonSet', 'name': 'node-agent', 'uid': 'node-agent', 'controller': True}
        ns = 'kube-system'
    md = {'name': name, 'namespace': ns, 'labels': {'app': app}, 'ownerReferences': [owner]}
    if annotations:
        md['annotations'] = annotations
    spec = {'nodeName': node, 'containers': [{'name': 'main', 'image': 'registry.example/app:1',
            'resources': {'requests': {'cpu': cpu, 'memory': mem}}}]}
    if tolerate:
        spec['tolerations'] = [{'key': 'dedicated', 'operator': 'Equal', 'value': tolerate, 'effect': 'NoSchedule'}]
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': md, 'spec': spec,
            'status': {'phase': 'Running', 'conditions': [{'type': 'Ready', 'status': 'True'}]}}

def write(dirname, nodes, pods, pdbs=None):
    os.makedirs(dirname, exist_ok=True)
    for n in nodes:
        pods.append(pod('node-agent-' + n['metadata']['name'], n['metadata']['name'], '100m', '128Mi', app='node-agent', daemon=True))
    json.dump({'apiVersion': 'v1', 'kind': 'List', 'items': nodes}, open(dirname + '/nodes.json', 'w'), indent=1, sort_keys=True)
    json.dump({'apiVersion': 'v1', 'kind': 'List', 'items': pods}, open(dirname + '/pods.json', 'w'), indent=1, sort_keys=True)
    if pdbs is not None:
        json.dump({'apiVersion': 'v1', 'kind': 'List', 'items': pdbs}, open(dirname + '/pdbs.json', 'w'), indent=1, sort_keys=True)

def pdb(name, app, allowed):
    return {'apiVersion': 'policy/v1', 'kind': 'PodDisruptionBudget', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': {'minAvailable': 1, 'selector': {'matchLabels': {'app': app}}},
            'status': {'disruptionsAllowed': allowed, 'currentHealthy': 1, 'desiredHealthy': 1, 'expectedPods': 1, 'observedGeneration': 1}}

# empty: e1 holds only its DaemonSet pod; w1 is full enough that nothing cheaper holds it.
write('empty', [node('e1', 'default', 'm5.large'), node('w1', 'default', 'c5.xlarge')],
      [pod('web-1', 'w1', '1500m', '1Gi', app='web'), pod('web-2', 'w1', '1500m', '1Gi', app='web')])
# repack: three underused m5.2xlarge become one cheaper node.
write('repack', [node('u1', 'default', 'm5.2xlarge'), node('u2', 'default', 'm5.2xlarge', zone='us-east-1b'), node('u3', 'default', 'm5.2xlarge')],
      [pod('api-1', 'u1', '800m', '1536Mi', app='api'), pod('api-2', 'u2', '800m', '1536Mi', app='api'), pod('api-3', 'u3', '800m', '1536Mi', app='api')])
# pdb: p1 runs a pod whose PDB allows no disruption; p2's pod may move onto p1.
write('pdb', [node('p1', 'default', 'm5.xlarge'), node('p2', 'default', 'm5.xlarge')],
      [pod('guarded-1', 'p1', '500m', '512Mi', app='guarded'), pod('web-1', 'p2', '500m', '512Mi', app='web')],
      pdbs=[pdb('guarded', 'guarded', 0), pdb('web', 'web', 1)])
# do-not-disrupt: d1 runs a pod annotated karpenter.sh/do-not-disrupt.
write('donotdisrupt', [node('d1', 'default', 'm5.xlarge'), node('d2', 'default', 'm5.xlarge')],
      [pod('batch-1', 'd1', '500m', '512Mi', app='batch', annotations={'karpenter.sh/do-not-disrupt': 'true'}), pod('web-1', 'd2', '500m', '512Mi', app='web')])
# limited and batch nodes are tainted dedicated=<pool>, so the scenarios' pools do not mix.
# budget: pool limited allows one node at a time and, on a schedule, no Underutilized disruption.
write('budget', [node('l1', 'limited', 'm5.large'), node('l2', 'limited', 'm5.large'), node('l3', 'limited', 'm5.large'), node('l4', 'limited', 'm5.xlarge')],
      [pod('web-1', 'l4', '500m', '512Mi', app='web', tolerate='limited')])
# whenempty: pool batch consolidates only empty nodes.
write('whenempty', [node('b1', 'batch', 'm5.large'), node('b2', 'batch', 'm5.xlarge')],
      [pod('job-1', 'b2', '500m', '512Mi', app='job', tolerate='batch')])
# spot: three spot nodes of pool flex, each too full to take another's pods; only a cheaper spot
# node could replace them, which needs --spot-to-spot.
write('spot', [node('s%d' % i, 'flex', 'm5.xlarge', ct='spot') for i in (1, 2, 3)],
      [pod('calc-%d' % i, 's%d' % i, '2500m', '1Gi', app='calc', tolerate='flex') for i in (1, 2, 3)])
# balanced: pool steady (Balanced). k1 runs a do-not-disrupt pod that leaves no room; replacing
# b1 (m5.2xlarge, $0.384/h) by a c5.xlarge ($0.17/h) saves 27.9% of the pool's cost for 60% of its
# disruption cost (3 of 5): score 0.46, rejected, although deleting it would score 0.83.
write('balanced', [node('k1', 'steady', 'm5.2xlarge'), node('b1', 'steady', 'm5.2xlarge')],
      [pod('db-1', 'k1', '7', '4Gi', app='db', annotations={'karpenter.sh/do-not-disrupt': 'true'}, tolerate='steady'),
       pod('calc-1', 'b1', '1500m', '1Gi', app='calc', tolerate='steady'), pod('calc-2', 'b1', '1500m', '1Gi', app='calc', tolerate='steady')])
