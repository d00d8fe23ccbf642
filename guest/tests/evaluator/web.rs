//! The web surface natively (the end-to-end suite runs the same through
//! the wasm child: tests/all/web.rs).

use crate::fake::run_alone;

/// Each surface once, natively: what the wasm suite checks in depth.
#[test]
fn every_web_surface_answers_natively() {
    let run = run_alone(
        r#"
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
    "#,
    );
    assert_eq!(
        run.value(),
        concat!(
            r#"["https://user:pw@example.com:8080/b?x=1&y=2&z=3+4#h","https://example.com:8080","#,
            r#"[104,226,130,172],"h€�",true,2,5,"/a/gi",["DataCloneError",true],36,4,true,"#,
            r#""AbortError","undefined","Number.prototype.toLocaleString is not available: this "#,
            r#"sandbox has no Intl (no locale data). Format numbers yourself: toFixed(n), "#,
            r#"toString(), or insert thousands separators by hand."]"#
        )
    );
}
