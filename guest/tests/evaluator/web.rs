//! The web surface natively (the end-to-end suite runs the same through
//! the wasm child: tests/all/web.rs).

use crate::fake::run_alone;

#[test]
fn smoke() {
    let run = run_alone(r#"
      const u = new URL("https://user:pw@example.com:8080/a/../b?x=1&y=2#h");
      u.searchParams.append("z", "3 4");
      const enc = new TextEncoder().encode("h€");
      const dec = new TextDecoder().decode(new Uint8Array([0xEF,0xBB,0xBF,0x68,0xE2,0x82,0xAC,0xFF]));
      const c = new AbortController();
      const a = {x: [1, 2], m: new Map([[1, {y: 2}]]), d: new Date(5), r: /a/gi};
      a.self = a;
      const b = structuredClone(a);
      let refused; try { structuredClone(() => 1); } catch (e) { refused = [e.name, e instanceof DOMException]; }
      let intl; try { (1).toLocaleString(); } catch (e) { intl = e.message; }
      c.abort();
      return [u.href, u.origin, [...enc], dec, b.self === b, b.m.get(1).y, b.d.getTime(), String(b.r), refused,
        crypto.randomUUID().length, crypto.getRandomValues(new Uint8Array(4)).length, c.signal.aborted,
        c.signal.reason.name, typeof Intl, intl];
    "#);
    println!("{}", run.result.value);
    println!("{}", run.result.error);
    assert!(run.result.ok);
}
