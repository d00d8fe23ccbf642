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
      let intl; try { intl = [(1234.5).toLocaleString(), new Date(0).toLocaleDateString()]; } catch (e) { intl = e.message; }
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
            r#""AbortError","object",["1,234.5","1/1/1970"]]"#
        )
    );
}

/// `structuredClone` of an array keeps holes, a length past its last
/// element and named properties in `keys()` order, and leaves out a
/// non-enumerable index as the standard does (as Node gives them). Its
/// indices are copied without a string made for each: `tests/all/web.rs`
/// clones a million elements under 64 MiB.
/// The web surface's own checks read what the program cannot replace: an
/// array's `byteLength` accessor of the program's answered 4 to the quota's
/// check and 2**30 to the draw (the guest then aborted for want of a GiB),
/// and a getter on `Object.prototype` made every `structuredClone` throw.
#[test]
fn what_the_web_surface_checks_cannot_be_replaced_by_the_program() {
    let run = run_alone(
        "const a = new Uint8Array(4); let read = 0;\n\
         Object.defineProperty(a, 'byteLength', { get() { read++; return 2 ** 30; } });\n\
         crypto.getRandomValues(a);\n\
         Object.defineProperty(Object.prototype, 'get', { value() {}, configurable: true });\n\
         Object.defineProperty(Object.prototype, 'value', { get() { return 'forged'; }, configurable: true });\n\
         const copy = structuredClone({ a: [1, 2], e: new TypeError('m') });\n\
         const shown = [copy.a.length, copy.e.message, copy.e instanceof TypeError];\n\
         delete Object.prototype.get; delete Object.prototype.value;\n\
         return [read, ...shown];",
    );
    assert_eq!(run.value(), "[0,2,\"m\",true]");
}

/// The web surface's own code uses what it captured at set-up, not what
/// the program may have replaced since: each of these replacements broke
/// `TextDecoder`, `structuredClone` or `URL` (the program's own iterables,
/// which the standards read through their iterator, are still read so).
#[test]
fn the_web_surface_works_whatever_built_ins_the_program_replaced() {
    let run = run_alone(
        r#"
        const saved = [Array.prototype[Symbol.iterator], String.prototype.trim,
                       String.prototype.toLowerCase, String.prototype.slice, String];
        // Made before: the program's own arrays are read through their iterator.
        const bytes = new Uint8Array([104, 105]), map = new Map([[1, 2]]);
        const poison = (what) => function () { throw new Error(what + " was used"); };
        Array.prototype[Symbol.iterator] = poison("the array iterator");
        String.prototype.trim = poison("trim");
        String.prototype.toLowerCase = poison("toLowerCase");
        String.prototype.slice = poison("slice");
        globalThis.String = poison("String");
        let out;
        try {
            const decoder = new TextDecoder(" UTF-8 ");
            const text = decoder.decode(bytes);
            const copy = structuredClone({ a: [1, 2], m: map });
            const url = new URL("https://x.test/p?q=1");
            const target = new EventTarget();
            let heard = 0;
            target.addEventListener("ping", () => heard++);
            target.dispatchEvent(new Event("ping"));
            out = [text, copy.a.length, copy.m.get(1), url.searchParams.get("q"), url.pathname,
                   heard];
        } finally {
            Array.prototype[Symbol.iterator] = saved[0];
            String.prototype.trim = saved[1];
            String.prototype.toLowerCase = saved[2];
            String.prototype.slice = saved[3];
            globalThis.String = saved[4];
        }
        return out;
        "#,
    );
    assert_eq!(run.value(), r#"["hi",2,2,"1","/p",1]"#);
}

#[test]
fn structured_clone_copies_odd_arrays_as_the_standard_says() {
    let program = "const odd = [1, , { a: 2 }]; odd.total = 3; odd[5] = 'five';\n\
                   const hidden = [1, 2, 3]; Object.defineProperty(hidden, 1, { value: 9, enumerable: false });\n\
                   const tail = [1, 2]; tail.length = 5;\n\
                   const cyc = [1]; cyc.push(cyc);\n\
                   const c = structuredClone(odd), h = structuredClone(hidden), t = structuredClone(tail), y = structuredClone(cyc);\n\
                   return [c.length, 1 in c, Object.keys(c), c[2] !== odd[2], c[2].a, c.total, Object.keys(h), h.length,\n\
                           1 in h, t.length, Object.keys(t), y[1] === y, Array.isArray(c)];";
    assert_eq!(
        run_alone(program).value(),
        r#"[6,false,["0","2","5","total"],true,2,3,["0","2"],3,false,5,["0","1"],true,true]"#
    );
    // A sparse array is copied by the indices it has, not counted up to its
    // length (a[1e9] = 1 ran to the wall clock).
    let sparse = "const a = []; a[1e9] = 'far'; a[3] = 'near';\n\
                  const b = []; b.length = 1e8;\n\
                  const c = structuredClone(a), d = structuredClone(b);\n\
                  return [c.length, c[1e9], c[3], Object.keys(c).length, d.length, Object.keys(d).length];";
    assert_eq!(
        run_alone(sparse).value(),
        r#"[1000000001,"far","near",2,100000000,0]"#
    );
}

/// `atob` and `btoa` called with nothing are refused as in browsers and
/// Node (QuickJS's own worked on the text "undefined": `btoa()` answered
/// "dW5kZWZpbmVk"), and `queueMicrotask` of what is no function says what
/// it wanted (QuickJS's own said only "not a function"). With an argument
/// each works as before, and each keeps a built-in's name and length.
#[test]
fn atob_btoa_and_queue_microtask_refuse_what_they_cannot_use() {
    let refused = |program: &str| run_alone(program).failure();
    let (kind, error) = refused("return btoa()");
    assert_eq!(kind, wire::FailureKind::Invalid);
    assert!(
        error.starts_with("TypeError: btoa: 1 argument required, but only 0 present"),
        "{error}"
    );
    let (_, error) = refused("return atob()");
    assert!(
        error.starts_with("TypeError: atob: 1 argument required, but only 0 present"),
        "{error}"
    );
    let (_, error) = refused("queueMicrotask(1)");
    assert!(
        error.starts_with("TypeError: queueMicrotask: the callback must be a function"),
        "{error}"
    );
    let (_, error) = refused("return atob('@@@')");
    assert!(error.starts_with("InvalidCharacterError"), "{error}");
    let run = run_alone(
        "const order = []; queueMicrotask(() => order.push('micro')); order.push('now');\n\
         await null;\n\
         return [btoa('hi'), atob('aGk='), btoa(undefined), order,\n\
                 [atob, btoa, queueMicrotask].map((f) => [f.name, f.length, 'prototype' in f])];",
    );
    assert_eq!(
        run.value(),
        r#"["aGk=","hi","dW5kZWZpbmVk",["now","micro"],[["atob",1,false],["btoa",1,false],["queueMicrotask",1,false]]]"#
    );
}
