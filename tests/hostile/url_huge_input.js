// A URL of 4 MiB, one whose host is a 1 MiB label (the URL Standard sets
// no length limit on labels), and 200,000 search params: parsed in the
// guest by the url crate; the parent holds nothing for any of it.
// expect: ok
// value: [4194316, 4194305, 1048584, 200000]
const u = new URL("https://h/" + "a".repeat(4 << 20) + "?q");
const host = new URL("https://" + "a".repeat(1 << 20) + ".example/").hostname;
const params = new URLSearchParams("a=1&".repeat(200000));
return [u.href.length, u.pathname.length, host.length, params.size];
