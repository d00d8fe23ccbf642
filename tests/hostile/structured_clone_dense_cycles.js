// A graph of 600 nodes where each points at every earlier one and at
// itself (180,000 edges, cycles everywhere): cloned once, sharing
// kept.
// expect: ok
// value: [600, true, true]
const nodes = [];
for (let i = 0; i < 600; i++) { const n = { i, links: [...nodes] }; n.self = n; nodes.push(n); }
nodes[0].links.push(nodes[599]);
const c = structuredClone(nodes);
return [c.length, c[599].links[0] === c[0] && c[5].self === c[5], c[0].links[0] === c[599]];
