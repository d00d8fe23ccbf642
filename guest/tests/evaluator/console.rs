//! `console`: one line per call, each level labelled.

use wasmwire_guest::Evaluator;

use crate::fake::{Console, Tools, run_alone, start};

#[test]
fn each_level_writes_one_labelled_line_per_call() {
    let run = run_alone(
        "console.log('plain', 1);\nconsole.info('i');\nconsole.warn('w');\nconsole.error('e');\nconsole.debug('d');",
    );
    assert_eq!(
        run.console,
        "plain 1\ninfo: i\nwarn: w\nerror: e\ndebug: d\n"
    );
}

#[test]
fn values_are_shown_as_a_reader_expects() {
    let program = r#"
        function named() {}
        console.log('s', 42, 1.5, true, null, undefined, 7n, Symbol('tag'), { a: [1, 'x'] }, [1, 2],
                    named, () => 1, new TypeError('bad'));"#;
    let run = run_alone(program);
    assert_eq!(
        run.console,
        "s 42 1.5 true null undefined 7n Symbol(tag) { a: [ 1, 'x' ] } [ 1, 2 ] [Function: named] [Function (anonymous)] TypeError: bad\\n    at <anonymous> (<program>:4:41)\n"
    );
}

#[test]
fn a_message_with_line_breaks_stays_on_one_line() {
    let run = run_alone("console.log('a\\nb\\r\\nc');\nconsole.error('x\\ny');");
    assert_eq!(run.console, "a\\nb\\r\\nc\nerror: x\\ny\n");
}

#[test]
fn unicode_and_lone_surrogates_are_written_as_utf8() {
    let run = run_alone("console.log('é😀', '\\ud800');");
    assert_eq!(run.console, "é😀 \u{fffd}\n");
}

#[test]
fn a_value_that_cannot_be_shown_does_not_fail_the_program() {
    // Nothing of the program's runs to show a value: not its `toString` or
    // `toJSON`, not a getter, not a proxy's traps.
    let program = r#"
        const cyclic = {}; cyclic.self = cyclic;
        const path = ['root']; path.push(path);
        const hostile = { toString() { throw new Error('no'); }, toJSON() { throw new Error('no'); } };
        const getter = { get g() { throw new Error('no'); } };
        const trapped = new Proxy({ shown: 1 }, { ownKeys() { throw new Error('no'); }, get() { throw new Error('no'); } });
        console.log(cyclic, path, hostile, getter, trapped);
        return 'still running';"#;
    let run = run_alone(program);
    assert_eq!(run.value(), r#""still running""#);
    assert_eq!(
        run.console,
        "<ref *1> { self: [Circular *1] } <ref *1> [ 'root', [Circular *1] ] \
         { toString: [Function: toString], toJSON: [Function: toJSON] } { g: [Getter] } { shown: 1 }\n"
    );
}

#[test]
fn values_read_as_node_shows_them() {
    // What JSON showed wrongly or not at all: NaN as null, undefined keys
    // dropped, Map and Set and Promise as `{}`, a BigInt anywhere as
    // `[object Object]`.
    let program = r#"
        class Order { constructor() { this.id = 7; } }
        console.log({ price: NaN, ratio: 1 / 0, note: undefined, z: -0, size: 10n });
        console.log(new Map([['k', { a: 1 }]]), new Set([1, 'x']), [undefined, , 3]);
        console.log(Promise.resolve(5), new Promise(() => {}), new Order(), Object.create(null));
        const p = Promise.reject(new Error('gone')); p.catch(() => {});
        console.log(p);
        console.log({ a: { b: { c: { d: 1 } } } }, new Date(0), /x/g, new Uint8Array([1, 2]));
        console.log(Array.from({ length: 102 }, (_, i) => i).slice(98), Array(102).fill(0).length);
        const e = new Error('lookup failed', { cause: new TypeError('no host') }); e.code = 'E1';
        console.log(e);
        console.log('%s has %d items (%i%%), %j %o', 'cart', 3, 4.7, { a: 1 }, [1], 'rest');
        console.dir('quoted');"#;
    let run = run_alone(program);
    assert_eq!(
        run.console,
        "{ price: NaN, ratio: Infinity, note: undefined, z: -0, size: 10n }\n\
         Map(1) { 'k' => { a: 1 } } Set(2) { 1, 'x' } [ undefined, <1 empty item>, 3 ]\n\
         Promise { 5 } Promise { <pending> } Order { id: 7 } [Object: null prototype] {}\n\
         Promise { <rejected> [Error: gone] }\n\
         { a: { b: { c: [Object] } } } 1970-01-01T00:00:00.000Z /x/g Uint8Array(2) [ 1, 2 ]\n\
         [ 98, 99, 100, 101 ] 102\n\
         Error: lookup failed { [cause]: [TypeError: no host], code: 'E1' }\\n    at <anonymous> (<program>:10:59)\n\
         cart has 3 items (4%), {\"a\":1} [ 1 ] rest\n\
         'quoted'\n"
    );
}

/// Node quotes a key unless it is letters, `_` and digits (not first):
/// `$` included, which was written bare.
#[test]
fn keys_are_quoted_as_node_quotes_them() {
    let run = run_alone(
        "console.log({ $d: 4, _a: 1, a$: 2, 'é': 3, '1a': 4, ab1: 5, 'a-b': 6, '': 7 });",
    );
    assert_eq!(
        run.console,
        "{ '$d': 4, _a: 1, 'a$': 2, 'é': 3, '1a': 4, ab1: 5, 'a-b': 6, '': 7 }\n"
    );
}

#[test]
fn the_rest_of_nodes_console_is_there() {
    // Each was a TypeError ("not a function") that ended the run.
    let program = r#"
        console.table([{ a: 1, b: 'x' }, { a: 2, c: true }]);
        console.count(); console.count(); console.count('x'); console.countReset('x'); console.count('x');
        console.group('G'); console.log('in'); console.warn('w'); console.groupEnd(); console.log('out');
        console.assert(1 === 1, 'not shown'); console.assert(false, 'shown', 2);
        console.time('t'); console.timeLog('t', 'mid'); console.timeEnd('t'); console.timeEnd('t');
        console.trace('here');
        console.dirxml('d'); console.groupCollapsed(); console.groupEnd(); console.clear();
        return 'done';"#;
    let run = run_alone(program);
    assert_eq!(run.value(), r#""done""#);
    let lines: Vec<&str> = run.console.lines().collect();
    assert_eq!(
        lines[..6],
        [
            "┌─────────┬───┬─────┬──────┐",
            "│ (index) │ a │ b   │ c    │",
            "├─────────┼───┼─────┼──────┤",
            "│ 0       │ 1 │ 'x' │      │",
            "│ 1       │ 2 │     │ true │",
            "└─────────┴───┴─────┴──────┘",
        ]
    );
    assert_eq!(
        lines[6..14],
        [
            "default: 1",
            "default: 2",
            "x: 1",
            "x: 1",
            "G",
            "  in",
            "warn:   w",
            "out",
        ]
    );
    assert_eq!(lines[14], "error: Assertion failed: shown 2");
    assert!(
        lines[15].starts_with("t: ") && lines[15].ends_with("ms mid"),
        "{}",
        lines[15]
    );
    assert!(
        lines[16].starts_with("t: ") && lines[16].ends_with("ms"),
        "{}",
        lines[16]
    );
    assert_eq!(lines[17], "warn: No such label 't' for console.timeEnd()");
    assert!(
        lines[18].starts_with("error: Trace: here\\n    at "),
        "{}",
        lines[18]
    );
    assert_eq!(lines[19..], ["d"]);
}

#[test]
fn console_output_is_written_as_the_program_runs_and_kept_on_failure() {
    let run = run_alone("console.log('before');\nthrow new Error('after');");
    assert_eq!(run.console, "before\n");
    assert!(!run.result.ok);
}

#[test]
fn replacing_console_methods_is_the_programs_own_business() {
    let run = run_alone(
        "const log = console.log;\nconsole.log = () => {};\nconsole.log('hidden');\nlog('shown');",
    );
    assert_eq!(run.console, "shown\n");
}

#[test]
fn an_evaluator_runs_one_program_and_a_second_is_refused_before_it_writes() {
    // The console (and the timers) are made once with the evaluator and
    // find the run in progress when called; a second run on the same
    // evaluator is refused before any of its code could reach them.
    let (first, second) = (Console::default(), Console::default());
    let mut evaluator = Evaluator::new().expect("evaluator");
    let mut tools = Tools::new();
    let program = "console.log('one'); setTimeout(() => console.log('later'), 0); return 1";
    let ran = evaluator.run(&start(program, &[]), &mut tools, first.clone());
    assert!(ran.ok, "{ran:?}");
    let again = evaluator.run(
        &start("console.log('two'); return 2", &[]),
        &mut tools,
        second.clone(),
    );
    assert!(!again.ok);
    assert!(
        again.error.contains("each run needs a fresh one"),
        "{}",
        again.error
    );
    assert_eq!(
        (first.text(), second.text()),
        (
            "one\nwarn: the program ended with 1 timer pending, never run (await what a timer \
             settles to have it run)\n"
                .to_owned(),
            String::new()
        )
    );
}

/// A failed call nobody awaited, or a promise rejected with no handler, was
/// lost without a word when the program ended well; one handled later is
/// no warning.
#[test]
fn rejections_nothing_handled_are_warned_about_when_the_program_ends_well() {
    let program = r#"
        fail(1);
        Promise.reject(new RangeError("r"));
        const late = Promise.reject("handled later");
        await new Promise((r) => setTimeout(r, 5));
        late.catch(() => {});
        return "done";"#;
    let run = crate::fake::run(
        program,
        &[("fail", "fail(x)")],
        crate::fake::Tools::new().failing("fail", wire::FailureKind::NotFound, "gone"),
    );
    assert_eq!(run.value(), r#""done""#);
    assert_eq!(
        run.console,
        "warn: a promise was rejected and nothing handled it: RangeError: r\n\
         warn: a promise was rejected and nothing handled it: ToolError from fail (not_found): gone\n"
    );
}

/// The promise a `then` returns, rejected with nothing to handle it (its
/// handler threw, or the promise before it rejected and it had no handler
/// for that), is warned about, and the promise `then` was called on is
/// not: it is handled. That promise is made with no resolving functions
/// (guest/rquickjs-sys/PATCHES.md item 17) and settled by its reaction.
#[test]
fn a_then_whose_promise_rejects_with_nothing_to_handle_it_is_warned_about() {
    let program = r#"
        Promise.reject(new RangeError("passed on")).then(() => 1);
        Promise.resolve(1).then(() => { throw new TypeError("thrown"); });
        Promise.resolve(2).then(() => { throw new Error("handled"); }).catch(() => {});
        Promise.reject(new Error("handled too")).then(null, () => 3);
        await new Promise((r) => setTimeout(r, 5));
        return "done";"#;
    let run = crate::fake::run(program, &[], crate::fake::Tools::new());
    assert_eq!(run.value(), r#""done""#);
    assert_eq!(
        run.console,
        "warn: a promise was rejected and nothing handled it: RangeError: passed on\n\
         warn: a promise was rejected and nothing handled it: TypeError: thrown\n"
    );
}

/// The report of rejections nothing handled comes after the program has
/// ended, and runs none of its code: a reason's getter that spun there ran
/// out the wall clock and the value returned was lost; one that called a
/// tool made the call after the end (tests/HOSTILE.md item 110).
#[test]
fn a_reason_is_told_at_the_end_without_running_its_getters() {
    let program = r#"
        Promise.reject({ get message() { for (;;) {} }, code: 7 });
        const e = new TypeError("t");
        Object.defineProperty(e, "name", { get() { echo(1); return "Named"; } });
        Promise.reject(e);
        Promise.reject(new Proxy({}, { ownKeys() { for (;;) {} } }));
        return "my value";"#;
    let mut start = crate::fake::start(program, &[("echo", "echo(x)")]);
    start.budget.wall_clock = std::time::Duration::from_secs(5);
    let run = crate::fake::run_start(&start, crate::fake::Tools::new().echo("echo"));
    assert_eq!(run.value(), r#""my value""#, "{}", run.console);
    // A name that is a getter is not read: the error is told as `Error`.
    assert_eq!(
        run.console,
        "warn: a promise was rejected and nothing handled it: { message: [Getter], code: 7 }\n\
         warn: a promise was rejected and nothing handled it: Error: t\n\
         warn: a promise was rejected and nothing handled it: {}\n"
    );
    assert!(
        run.tools.tools_sent().is_empty(),
        "{:?}",
        run.tools.tools_sent()
    );
}

/// Calls made and never awaited, still unanswered when the program ends.
#[test]
fn calls_left_unanswered_at_the_end_are_warned_about() {
    let program = "slow(1); slow(2); other(3); return 'done';";
    let run = crate::fake::run(
        program,
        &[("slow", "slow(x)"), ("other", "other(x)")],
        crate::fake::Tools::new().echo("slow").echo("other"),
    );
    assert_eq!(run.value(), r#""done""#);
    assert_eq!(
        run.console,
        "warn: the program ended with 3 tool calls unanswered (other, slow): 3 cancelled while \
         running (work may be half done, answers dropped); await a call to have it finish\n"
    );
}

/// Reading what a program settled with runs its code: a `toJSON` of the
/// value, a getter of the error's message. A tool called there is never
/// sent (the program has ended), and was dropped without a word: the
/// Result `ok`, no call, no warning.
#[test]
fn calls_made_while_the_value_or_error_is_read_are_warned_about_not_sent() {
    let tools = || crate::fake::Tools::new().echo("mark");
    let run = crate::fake::run(
        "return { toJSON() { mark(1); mark(2); return 'v'; } };",
        &[("mark", "mark(x)")],
        tools(),
    );
    assert_eq!(run.value(), r#""v""#);
    assert!(run.tools.sent.is_empty(), "{:?}", run.tools.sent);
    assert_eq!(
        run.console,
        "warn: 2 tool calls (mark) made after the program ended, while its value was turned \
         into JSON, never sent: a tool can be called only while the program runs\n"
    );
    let run = crate::fake::run(
        "const e = new Error('x');\n\
         Object.defineProperty(e, 'message', { get() { mark(1); return 'read'; } });\n\
         throw e;",
        &[("mark", "mark(x)")],
        tools(),
    );
    assert!(run.failure().1.contains("read"), "{:?}", run.result);
    assert!(run.tools.sent.is_empty(), "{:?}", run.tools.sent);
    assert!(
        run.console.contains(
            "warn: 1 tool call (mark) made after the program ended, while its error was read, \
             never sent"
        ),
        "{}",
        run.console
    );
    // A call the program made and left running is told as before, not as
    // one made too late.
    let run = crate::fake::run(
        "mark(0); return { toJSON() { mark(1); return 'v'; } };",
        &[("mark", "mark(x)")],
        tools(),
    );
    assert_eq!(run.tools.sent.len(), 1, "{:?}", run.tools.sent);
    assert!(
        run.console
            .contains("1 tool call (mark) made after the program ended")
            && run
                .console
                .contains("ended with 1 tool call unanswered (mark): 1 cancelled"),
        "{}",
        run.console
    );
}

/// Found by an adversarial probe of the console: a sparse array was walked
/// hole by hole (`new Array(1e8)`: half a minute), a chain of proxies was
/// recursed (3,000 deep: a stack overflow no `try` caught), an object with
/// URL's tag had its getters run, and a program that replaced builtins the
/// console used (`Map`, a setter on Object.prototype, RegExp's methods)
/// broke or forged the console's output.
#[test]
fn a_hostile_program_cannot_stall_break_or_forge_the_console() {
    let program = r#"
        console.log(new Array(1e8));
        let p = { a: 1 };
        for (let i = 0; i < 3000; i++) p = new Proxy(p, {});
        console.log(p);
        let ran = 0;
        console.log({ [Symbol.toStringTag]: "URL", get href() { ran++; return "x"; } });
        globalThis.Map = function () { throw new Error("no Map"); };
        Object.defineProperty(Object.prototype, "s", { set() { throw new Error("no s"); }, configurable: true });
        Object.defineProperty(Object.prototype, "full", { get() { return true; }, configurable: true });
        RegExp.prototype[Symbol.replace] = () => "FORGED";
        RegExp.prototype.exec = () => { throw new Error("no exec"); };
        Array.prototype[0] = "Map";
        const cyc = { "a-b": "it's\n" }; cyc.self = cyc;
        console.log(cyc, "ok\u2028warn: forged");
        console.table([{ a: 1 }]);
        return ran;"#;
    let run = run_alone(program);
    assert_eq!(run.value(), "0");
    let lines: Vec<&str> = run.console.lines().collect();
    assert_eq!(lines[0], "[ <10000 empty items>, ... 99990000 more items ]");
    assert_eq!(lines[1], "{ a: 1 }");
    assert_eq!(
        lines[2],
        "Object [URL] { href: [Getter], [Symbol(Symbol.toStringTag)]: 'URL' }"
    );
    assert_eq!(
        lines[3],
        "<ref *1> { 'a-b': \"it's\\n\", self: [Circular *1] } ok\\u2028warn: forged"
    );
    assert_eq!(lines[5], "│ (index) │ a │");
    assert_eq!(lines.len(), 9, "{lines:?}");
}

/// Rejections past the sixteen the run keeps are counted; one of them
/// handled later was still counted as unhandled (this read "and 5 more").
#[test]
fn rejections_handled_later_are_not_warned_about_past_the_kept_ones() {
    let program = r#"
        const ps = Array.from({ length: 20 }, (_, i) => Promise.reject(i));
        const kept = Promise.reject("kept");
        await null;
        ps.forEach((p) => p.catch(() => {}));
        return 1;"#;
    let run = run_alone(program);
    assert_eq!(run.value(), "1");
    // Only `kept`, the twenty-first, is left.
    assert_eq!(
        run.console,
        "warn: and 1 more promises were rejected and nothing handled them\n"
    );
}

/// A returned value that holds what JSON writes as `{}` (a caught Error, a
/// Map of results, an un-awaited Promise) still gives JSON.stringify's
/// value, and the console says what was lost and where: it ended `ok` with
/// the data silently gone. The walk is breadth first, so a long array at
/// the top does not spend its budget (20,000 properties) before its first
/// item is looked into.
#[test]
fn a_returned_value_that_json_empties_is_warned_of() {
    const TAIL: &str = ", which JSON does not carry in full (an Error's message, a Map's or Set's \
                        entries, an iterator's items, a getter's value, a Promise's value): \
                        return plain data (error.message, Object.fromEntries(map), [...set], \
                        [...iterator], { total: o.total }, the awaited value)\n";
    for (program, value, warned) in [
        (
            "try { null.x } catch (e) { return { ok: false, error: e } }",
            r#"{"ok":false,"error":{}}"#,
            "warn: the returned value holds an Error at .error",
        ),
        (
            "return new Map([['a', 1]]);",
            "{}",
            "warn: the program returned a Map",
        ),
        (
            "const f = async () => 1;\nreturn { rows: [1, { 'a b': f() }] };",
            r#"{"rows":[1,{"a b":{}}]}"#,
            r#"warn: the returned value holds a Promise (not awaited?) at .rows[1]["a b"]"#,
        ),
        (
            "return [[], [new Set([1])], new Error('first')];",
            "[[],[{}],{}]",
            "warn: the returned value holds an Error at [2]",
        ),
        // Iterators and generators, and a class whose data is behind
        // getters (private fields, as modern classes keep it).
        (
            "return { ids: new Map([[1, 'a']]).keys() };",
            r#"{"ids":{}}"#,
            "warn: the returned value holds an iterator at .ids",
        ),
        (
            "return [[1, 2].entries()];",
            "[{}]",
            "warn: the returned value holds an iterator at [0]",
        ),
        (
            "function* rows() { yield 1; }\nreturn rows();",
            "{}",
            "warn: the program returned a generator",
        ),
        (
            "class Cart { #items = [1, 2]; get total() { return this.#items.length; } }\n\
             return { carts: [new Cart(), new Cart()] };",
            r#"{"carts":[{},{}]}"#,
            "warn: the returned value holds an object whose `total` is a getter at .carts[0]",
        ),
    ] {
        let run = run_alone(program);
        assert_eq!(run.value(), value, "{program}");
        assert_eq!(run.console, format!("{warned}{TAIL}"), "{program}");
    }
    // 20,001 promises not awaited (`ids.map(async ...)` without
    // `Promise.all`): the budget went on listing the array.
    let run = run_alone("return Array.from({ length: 20001 }, (_, i) => i).map(async (i) => i);");
    assert!(
        run.console
            .starts_with("warn: the returned value holds a Promise (not awaited?) at [0]"),
        "{}",
        run.console
    );
    // What JSON writes faithfully is not warned of: a toJSON (a Date, an
    // Error given one), typed arrays, plain data, an empty Map, getters
    // never run, a Proxy never asked (not even on a prototype chain).
    for program in [
        "return { at: new Date(0), bytes: new Uint8Array(2), n: [1, 'x', null] };",
        "const e = new Error('x'); e.toJSON = () => e.message; return { e };",
        "return { none: new Map(), empty: new Set() };",
        "return { get boom() { throw new Error('ran') }, ok: 1 };",
        "return new Proxy({}, { ownKeys() { throw new Error('trap') } });",
        "class Row { total = 3; get total() { return 0; } }\nreturn [new Row(), {}];",
        "class Row { n = 1; double() { return 2; } }\nreturn [new Row(), {}];",
        "return { a: Object.create(new Proxy({}, { getOwnPropertyDescriptor() { console.log('trap ran') } })) };",
    ] {
        let run = run_alone(program);
        assert!(run.console.is_empty(), "{program}: {}", run.console);
    }
}

/// What a program left behind is told when it fails too, where it helps
/// most: the failure is often the symptom of a call that failed unseen
/// (`cache.a.length` of a load nobody awaited). The reason the program
/// failed with is not told twice.
#[test]
fn what_a_failed_program_left_behind_is_warned_about() {
    let program = "const cache = {};\n\
                   async function load(k) { cache[k] = await fail(k); }\n\
                   load('a');\n\
                   await new Promise((r) => setTimeout(r, 5));\n\
                   return cache.a.length;";
    let run = crate::fake::run(
        program,
        &[("fail", "fail(x)")],
        crate::fake::Tools::new().failing("fail", wire::FailureKind::Transient, "try later"),
    );
    let (_, error) = run.failure();
    assert!(
        error.starts_with("TypeError: cannot read property 'length'"),
        "{error}"
    );
    assert_eq!(
        run.console,
        "warn: a promise was rejected and nothing handled it: ToolError from fail (transient): \
         try later\n"
    );
    let run = run_alone("throw new Error('once');");
    assert!(run.console.is_empty(), "{}", run.console);
    // A program that can never finish: the call that failed unseen is why.
    let run = crate::fake::run(
        "fail(1);\nawait new Promise(() => {});",
        &[("fail", "fail(x)")],
        crate::fake::Tools::new().failing("fail", wire::FailureKind::NotFound, "gone"),
    );
    assert!(run.failure().1.contains("can never finish"));
    assert_eq!(
        run.console,
        "warn: a promise was rejected and nothing handled it: ToolError from fail (not_found): \
         gone\n"
    );
}

/// An error logged by itself shows where it was made, as Node shows its
/// stack (it showed only `TypeError: bad id 3`, which left a program's
/// `catch (e) { console.error(e) }` with no place to look): one line, its
/// breaks escaped as every console line's are. An error inside a value
/// stays a headline; the stack is read by QuickJS's own getter, never one
/// the program put in its place.
#[test]
fn an_error_logged_shows_its_stack_on_its_line() {
    let run = run_alone(
        "async function load(id) { throw new TypeError('bad id ' + id); }\n\
         function outer() { return load(3); }\n\
         try { await outer(); } catch (e) { console.error(e); console.log({ e }); }\n\
         const own = new Error('own'); own.stack = 'made up';\n\
         console.log(own);\n\
         Object.defineProperty(Error.prototype, 'stack', { get() { throw new Error('ran'); } });\n\
         console.log(new RangeError('still'));\n\
         return 1;",
    );
    assert_eq!(run.value(), "1");
    assert_eq!(
        run.console,
        "error: TypeError: bad id 3\\n    at load (<program>:1:59)\\n    at outer (<program>:2:27)\\n    at <anonymous> (<program>:3:13)\n\
         { e: [TypeError: bad id 3] }\n\
         Error: own\\nmade up\n\
         RangeError: still\\n    at <anonymous> (<program>:7:17)\n"
    );
}

/// `countReset` forgets the label, as Node's does: a second reset warns,
/// and a loop that counts and resets fresh labels holds none of them
/// (kept at 0, 100,000 of them filled 8 MiB after about 11,000).
#[test]
fn count_reset_forgets_the_label() {
    let program = r#"
        console.count('x'); console.countReset('x'); console.countReset('x'); console.count('x');
        return 'done';"#;
    let run = run_alone(program);
    assert_eq!(run.value(), r#""done""#);
    let lines: Vec<&str> = run.console.lines().collect();
    assert_eq!(
        lines,
        ["x: 1", "warn: Count for 'x' does not exist", "x: 1"]
    );
}

/// Buffers, views and the web classes read as Node shows them: a
/// SharedArrayBuffer was shown as `[object]` (ArrayBuffer's getter refused
/// it), a buffer without its bytes, and a URL, an AbortSignal or an Event
/// without the state their getters hold (`AbortSignal {}`).
#[test]
fn buffers_and_the_web_classes_show_what_they_hold() {
    let program = r#"
        const bytes = new Uint8Array(103); bytes[1] = 255; bytes[2] = 16;
        console.log(new SharedArrayBuffer(2), new ArrayBuffer(0), [bytes.buffer]);
        const b = new ArrayBuffer(4); b.tag = 1;
        console.log(new DataView(b, 1, 2), { a: { b: { c: b } } });
        const gone = new ArrayBuffer(4); const view = new DataView(gone);
        structuredClone(gone, { transfer: [gone] });
        const grown = new ArrayBuffer(8, { maxByteLength: 16 }); const tail = new DataView(grown, 4); grown.resize(2);
        console.log(gone, view, tail);
        console.log(new URL("https://u:p@example.com:8080/a?x=1#h"));
        const c = new AbortController(); c.abort();
        console.log(c, new AbortController().signal, new TextDecoder(), new TextEncoder());
        const e = new Event("ping"); e.n = 1;
        console.log(e.type, { ...e }, Object.create(URL.prototype), Object.create(AbortSignal.prototype));
        class Bus extends EventTarget {}
        console.log(new Bus());"#;
    let run = run_alone(program);
    let zeros = " 00".repeat(97);
    assert_eq!(
        run.console,
        format!(
            "SharedArrayBuffer {{ [Uint8Contents]: <00 00>, byteLength: 2 }} \
             ArrayBuffer {{ [Uint8Contents]: <>, byteLength: 0 }} \
             [ ArrayBuffer {{ [Uint8Contents]: <00 ff 10{zeros} ... 3 more bytes>, byteLength: 103 }} ]\n\
             DataView {{ byteLength: 2, byteOffset: 1, buffer: ArrayBuffer {{ [Uint8Contents]: <00 00 00 00>, byteLength: 4, tag: 1 }} }} \
             {{ a: {{ b: {{ c: [ArrayBuffer] }} }} }}\n\
             ArrayBuffer {{ (detached), byteLength: 0 }} \
             DataView {{ (detached), buffer: ArrayBuffer {{ (detached), byteLength: 0 }} }} \
             DataView {{ (out of bounds), buffer: ArrayBuffer {{ [Uint8Contents]: <00 00>, byteLength: 2 }} }}\n\
             URL {{ href: 'https://u:p@example.com:8080/a?x=1#h', origin: 'https://example.com:8080', \
             protocol: 'https:', username: 'u', password: 'p', host: 'example.com:8080', hostname: 'example.com', \
             port: '8080', pathname: '/a', search: '?x=1', searchParams: URLSearchParams {{ 'x' => '1' }}, hash: '#h' }}\n\
             AbortController {{ signal: AbortSignal {{ aborted: true }} }} AbortSignal {{ aborted: false }} \
             TextDecoder {{ encoding: 'utf-8', fatal: false, ignoreBOM: false }} TextEncoder {{ encoding: 'utf-8' }}\n\
             ping {{ n: 1 }} URL {{}} AbortSignal {{}}\n\
             Bus {{}}\n"
        )
    );
}

/// The walks up a prototype chain (a name, a tag, whether it is an error,
/// the web classes' getters) asked a Proxy on the chain, running the
/// program's traps from inside the console: one per prototype, twenty for
/// these four logs.
#[test]
fn a_proxy_on_a_prototype_chain_is_not_asked() {
    let program = r#"
        const ran = [];
        const handler = {};
        for (const t of ["getPrototypeOf", "getOwnPropertyDescriptor", "get", "has", "ownKeys"]) {
            handler[t] = (...a) => { ran.push(t); return Reflect[t](...a); };
        }
        class Named { constructor() { this.own = 2; } }
        const o = Object.create(new Proxy(Named.prototype, handler));
        o.own = 1;
        class K {}
        Object.setPrototypeOf(K.prototype, new Proxy(Object.prototype, handler));
        const revoked = Proxy.revocable({}, {}); revoked.revoke();
        console.log(o, new K(), [new K()], Object.create(revoked.proxy));
        console.log(new Error("e", { cause: o }), Object.create(new Proxy(URL.prototype, handler)));
        return ran.length;"#;
    let run = run_alone(program);
    assert_eq!(run.value(), "0", "{}", run.console);
    assert_eq!(
        run.console,
        "Named { own: 1 } K {} [ K {} ] [Object: null prototype] {}
\
         Error: e { [cause]: Named { own: 1 } }\\n    at <anonymous> (<program>:14:45) URL {}\n"
    );
}
