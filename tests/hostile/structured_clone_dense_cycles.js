// A graph of 300 nodes where each points at every earlier one and at
// itself (45,000 edges, cycles everywhere): cloned once, sharing
// kept.
// expect: ok
// value: [300, true, true]
const nodes = [];
for (let i = 0; i < 300; i++) { const n = { i, links: [...nodes] }; n.self = n; nodes.push(n); }
nodes[0].links.push(nodes[299]);
const c = structuredClone(nodes);
return [c.length, c[299].links[0] === c[0] && c[5].self === c[5], c[0].links[0] === c[299]];
