// A graph of 2,000 nodes where each points at every earlier one (two
// million edges, cycles everywhere): cloned once, sharing kept.
// expect: ok
// value: [2000, true, true]
const nodes = [];
for (let i = 0; i < 2000; i++) { const n = { i, links: [...nodes] }; n.self = n; nodes.push(n); }
nodes[0].links.push(nodes[1999]);
const c = structuredClone(nodes);
return [c.length, c[1999].links[0] === c[0] && c[5].self === c[5], c[0].links[0] === c[1999]];
