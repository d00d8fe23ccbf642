// A graph of 1,000 nodes where each points at every earlier one and at
// itself (half a million edges, cycles everywhere): cloned once, sharing
// kept.
// expect: ok
// value: [1000, true, true]
const nodes = [];
for (let i = 0; i < 1000; i++) { const n = { i, links: [...nodes] }; n.self = n; nodes.push(n); }
nodes[0].links.push(nodes[999]);
const c = structuredClone(nodes);
return [c.length, c[999].links[0] === c[0] && c[5].self === c[5], c[0].links[0] === c[999]];
