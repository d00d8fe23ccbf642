// A URL of 1 MiB, one whose host is a 256 KiB label (the URL Standard
// sets no length limit on labels), and 50,000 search params: parsed in the
// guest by the url crate; the parent holds nothing for any of it.
// expect: ok
// value: [1048588, 1048577, 262152, 50000]
const u = new URL("https://h/" + "a".repeat(1 << 20) + "?q");
const host = new URL("https://" + "a".repeat(1 << 18) + ".example/").hostname;
const params = new URLSearchParams("a=1&".repeat(50000));
return [u.href.length, u.pathname.length, host.length, params.size];
