//! Bindings: global functions, `host`, args, names, deadlines, intrinsics.

use wire::FailureKind;

use crate::fake::{Tools, run};

#[test]
fn signature_parameters_become_the_args_object() {
    let run = run(
        "return await get_logs('db1', 50);",
        &[("get_logs", "get_logs(host, count)")],
        Tools::new().echo("get_logs"),
    );
    assert_eq!(run.tools.args_sent(), [r#"{"host":"db1","count":50}"#]);
    assert_eq!(run.value(), r#"{"host":"db1","count":50}"#);
}

#[test]
fn a_missing_argument_is_left_out_what_map_passes_is_ignored_and_a_rest_parameter_takes_the_rest() {
    // `ids.map(get_logs)` passes each id with its index and the array: the
    // array goes unread (other extra arguments are refused, below).
    let run = run(
        "await get_logs('db1'); await get_logs('db2', 5); await get_logs(undefined, 1);\n\
         await Promise.all(['db3'].map(get_logs)); await many(1, 2, 3); await many(1);",
        &[
            ("get_logs", "get_logs(host, count)"),
            ("many", "many(first, ...rest)"),
        ],
        Tools::new().echo("get_logs").echo("many"),
    );
    assert_eq!(
        run.tools.args_sent(),
        [
            r#"{"host":"db1"}"#,
            r#"{"host":"db2","count":5}"#,
            r#"{"count":1}"#,
            r#"{"host":"db3","count":0}"#,
            r#"{"first":1,"rest":[2,3]}"#,
            r#"{"first":1,"rest":[]}"#,
        ]
    );
}

#[test]
fn without_a_signature_the_single_argument_is_sent_as_json_or_as_a_string() {
    let run = run(
        "await search({ q: 'x', n: [1, 2] }); await search('raw text'); await search(); await search(7);",
        &[("search", "")],
        Tools::new().echo("search"),
    );
    assert_eq!(
        run.tools.args_sent(),
        [r#"{"q":"x","n":[1,2]}"#, "raw text", "", "7"]
    );
}

#[test]
fn args_without_a_json_form_reject_the_call_and_send_nothing() {
    let program = r#"
        const out = [];
        for (const bad of [() => 1, 5n]) {
            try { await search(bad); } catch (e) { out.push(e.name); }
        }
        const cyclic = {}; cyclic.self = cyclic;
        try { await search(cyclic); } catch (e) { out.push(e.name); }
        return out;"#;
    let run = run(program, &[("search", "")], Tools::new().echo("search"));
    assert_eq!(run.value(), r#"["TypeError","TypeError","TypeError"]"#);
    assert!(run.tools.sent.is_empty());
}

#[test]
fn every_binding_is_also_on_host() {
    let run = run(
        "return [await host.get_logs('a', 1), await host.search('q'), Object.keys(host)];",
        &[("get_logs", "get_logs(host, count)"), ("search", "")],
        Tools::new().echo("get_logs").echo("search"),
    );
    assert_eq!(
        run.value(),
        r#"[{"host":"a","count":1},"q",["get_logs","search"]]"#
    );
}

#[test]
fn host_call_sets_the_deadline_and_takes_args_as_json() {
    let run = run(
        "return await host.call('get_logs', { host: 'a' }, { deadlineMs: 250 });",
        &[("get_logs", "get_logs(host, count)")],
        Tools::new().echo("get_logs"),
    );
    let sent = &run.tools.sent[0];
    assert_eq!(
        (sent.tool.as_str(), sent.args.as_str(), sent.deadline_ms),
        ("get_logs", r#"{"host":"a"}"#, 250)
    );
}

#[test]
fn calls_without_a_deadline_send_none() {
    let run = run(
        "await host.call('t', 'x'); await host.call('t', 'x', {}); await t('x');",
        &[("t", "")],
        Tools::new().echo("t"),
    );
    assert!(
        run.tools.sent.iter().all(|s| s.deadline_ms == 0),
        "{:?}",
        run.tools.sent
    );
}

#[test]
fn a_fractional_deadline_is_rounded_up() {
    let run = run(
        "await host.call('t', '', { deadlineMs: 0.5 });",
        &[("t", "")],
        Tools::new().echo("t"),
    );
    assert_eq!(run.tools.sent[0].deadline_ms, 1);
}

/// `signal: null` is no signal (as in `fetch`, where code passes
/// `opts.signal ?? null`); a primitive signal, or one in `AbortSignal.any`,
/// is named, not QuickJS's "invalid 'in' operand".
#[test]
fn a_null_signal_is_none_and_a_primitive_one_is_named() {
    let program = r#"
        const out = [await host.call('t', 'sent', { signal: null })];
        for (const f of [() => host.call('t', 'x', { signal: 'nope' }), () => AbortSignal.any([1]),
                         () => new EventTarget().dispatchEvent(1)]) {
            try { await f(); out.push('no error'); } catch (e) { out.push(e.message); }
        }
        return out;"#;
    let run = run(program, &[("t", "")], Tools::new().echo("t"));
    assert_eq!(
        run.value(),
        r#"["sent","host.call: options.signal must be an AbortSignal","AbortSignal.any: every member must be an AbortSignal","EventTarget.dispatchEvent: the argument is not an Event"]"#
    );
    assert_eq!(run.tools.sent.len(), 1);
}

/// An argument past a binding's own is refused, not dropped: the call
/// would run without it (`fetch_doc(id, { signal })` with no signal,
/// `search("q", { limit: 5 })` with no limit). What `map` and `forEach`
/// pass after the value (the index, the array), `undefined` and `null`
/// still go unread, so `ids.map(t)` works.
#[test]
fn an_argument_past_a_bindings_own_is_refused_not_dropped() {
    let program = r#"
        const out = [];
        const controller = new AbortController();
        for (const f of [() => t('a', { signal: controller.signal }), () => t('b', { limit: 5 }),
                         () => t('c', 'en'), () => pair('d', 1, { deadlineMs: 5 }),
                         () => pair('e', 2, undefined, true),
                         () => t('f', new Proxy({}, { has() { throw new Error('trap ran'); } })),
                         () => t('g', { timeout: 200 })]) {
            try { await f(); out.push('sent'); } catch (e) { out.push(e.name + ': ' + e.message); }
        }
        out.push(await Promise.all(['x', 'y'].map(t)));
        out.push(await Promise.all(['z'].map(one)));
        out.push(await t('w', undefined, null));
        out.push(await pair('v', 3, null));
        return out;"#;
    let run = run(
        program,
        &[("t", ""), ("pair", "pair(key, n)"), ("one", "one(key)")],
        Tools::new().echo("t").echo("pair").echo("one"),
    );
    assert_eq!(
        run.value(),
        r#"["TypeError: t takes one argument, its args; its 2nd argument, an object, would be read by nothing; call options go through host.call(\"t\", args, { signal, deadlineMs }) (a timeout is deadlineMs, in milliseconds)","TypeError: t takes one argument, its args; its 2nd argument, an object, would be read by nothing; put everything the tool needs in that one value","TypeError: t takes one argument, its args; its 2nd argument, a string, would be read by nothing; put everything the tool needs in that one value","TypeError: pair takes 2 arguments, key, n; its 3rd argument, an object, would be read by nothing; call options go through host.call(\"pair\", args, { signal, deadlineMs }) (a timeout is deadlineMs, in milliseconds)","TypeError: pair takes 2 arguments, key, n; its 4th argument, a boolean, would be read by nothing","TypeError: t takes one argument, its args; its 2nd argument, a proxy, would be read by nothing; put everything the tool needs in that one value","TypeError: t takes one argument, its args; its 2nd argument, an object, would be read by nothing; call options go through host.call(\"t\", args, { signal, deadlineMs }) (a timeout is deadlineMs, in milliseconds)",["x","y"],[{"key":"z"}],"w",{"key":"v","n":3}]"#
    );
    // Only the calls the program could make were sent.
    assert_eq!(run.tools.sent.len(), 5);
}

/// A tool declared with no parameters (`now()`) sent `{}` for
/// `now("UTC")`, `now({tz: "UTC"})` or `now([1])` without a word, and its
/// answer was taken for the one asked (found by a probe of the values
/// crossing to tools).
#[test]
fn an_argument_to_a_binding_without_parameters_is_refused() {
    let program = r#"
        const out = [];
        for (const f of [() => now("UTC"), () => now({ tz: "UTC" }), () => now(undefined, 1)]) {
            try { await f(); out.push('sent'); } catch (e) { out.push(e.name + ': ' + e.message); }
        }
        out.push(await now(), await now(undefined), await now(null));
        return out;"#;
    let run = run(program, &[("now", "now()")], Tools::new().echo("now"));
    assert_eq!(
        run.value(),
        r#"["TypeError: now takes no arguments; its 1st argument, a string, would be read by nothing","TypeError: now takes no arguments; its 1st argument, an object, would be read by nothing","TypeError: now takes no arguments; its 2nd argument, a number, would be read by nothing",{},{},{}]"#
    );
    assert_eq!(run.tools.sent.len(), 3);
}

#[test]
fn host_call_rejects_bad_arguments_without_sending() {
    let program = r#"
        const out = [];
        for (const [name, opts] of [[42, undefined], ['t', { deadlineMs: -1 }], ['t', { deadlineMs: 'soon' }],
                                    ['t', { deadlineMs: Infinity }], ['t', 5], ['t', { timeout: 5000 }],
                                    ['t', { deadlineMs: 10, retries: 3 }]]) {
            try { await host.call(name, 'x', opts); } catch (e) { out.push(e.name); }
        }
        try { await host.call('t', 'x', { timeout: 5000 }); } catch (e) { out.push(e.message); }
        return out;"#;
    let run = run(program, &[("t", "")], Tools::new().echo("t"));
    assert_eq!(
        run.value(),
        r#"["TypeError","RangeError","RangeError","RangeError","TypeError","TypeError","TypeError","host.call: unknown option \"timeout\" (a deadline is `deadlineMs`, in milliseconds); the options are deadlineMs and signal"]"#
    );
    assert!(run.tools.sent.is_empty());
}

#[test]
fn names_that_are_not_identifiers_or_shadow_globals_are_reachable_only_through_host() {
    let names = [
        "get-logs", "eval", "JSON", "Promise", "console", "class", "host", "toString", "données",
        "call",
    ];
    let bindings: Vec<(&str, &str)> = names.iter().map(|n| (*n, "")).collect();
    let tools = names.iter().fold(Tools::new(), |tools, n| tools.echo(n));
    let program = r#"
        const globals = [typeof eval('1 + 1'), typeof JSON.parse, typeof Promise.all, typeof console.log,
                         typeof globalThis['get-logs'], typeof globalThis['données'], typeof host.call,
                         typeof toString, toString === Object.prototype.toString];
        const sent = [await host['get-logs']('a'), await host.eval('b'), await host.JSON('c'),
                      await host.class('d'), await host.host('e'), await host['données']('f'),
                      await host.toString('g'), await host.call('call', 'h')];
        return { globals, sent };"#;
    let run = run(program, &bindings, tools);
    assert_eq!(
        run.value(),
        r#"{"globals":["number","function","function","function","undefined","undefined","function","function",true],"sent":["a","b","c","d","e","f","g","h"]}"#
    );
    assert_eq!(
        run.tools.tools_sent(),
        [
            "get-logs", "eval", "JSON", "class", "host", "données", "toString", "call"
        ]
    );
}

#[test]
fn an_identifier_binding_is_a_global_function_named_for_its_tool() {
    let run = run(
        "return [typeof get_logs, get_logs.name, get_logs.length, typeof host.search, search.length];",
        &[("get_logs", "get_logs(host, count)"), ("search", "")],
        Tools::new(),
    );
    assert_eq!(run.value(), r#"["function","get_logs",2,"function",1]"#);
}

#[test]
fn reassigning_json_stringify_does_not_change_what_is_sent() {
    let program = r#"
        JSON.stringify = () => '"hijacked"';
        globalThis.JSON = { stringify: () => 'hijacked', parse: () => 'hijacked' };
        return [await get_logs('db1', 2), await search({ a: 1 })];"#;
    let run = run(
        program,
        &[("get_logs", "get_logs(host, count)"), ("search", "")],
        Tools::new().echo("get_logs").echo("search"),
    );
    assert_eq!(
        run.tools.args_sent(),
        [r#"{"host":"db1","count":2}"#, r#"{"a":1}"#]
    );
    // Values are parsed with the original JSON too.
    assert_eq!(run.value(), r#"[{"host":"db1","count":2},{"a":1}]"#);
}

#[test]
fn polluting_object_prototype_does_not_change_what_is_sent() {
    let program = r#"
        Object.prototype.injected = 'x';
        Object.prototype.toJSON = function () { return 'hijacked'; };
        Object.defineProperty(Object.prototype, 'count', { set() { throw new Error('setter ran'); } });
        Object.defineProperty(Object.prototype, 'host', { get() { return 'evil'; }, set() {} });
        Array.prototype.toJSON = function () { return 'hijacked'; };
        String.prototype.toWellFormed = function () { return 'hijacked'; };
        await get_logs('db1', 50);
        await search('plain');
        await search(12);"#;
    let run = run(
        program,
        &[("get_logs", "get_logs(host, count)"), ("search", "")],
        Tools::new().echo("get_logs").echo("search"),
    );
    assert_eq!(
        run.tools.args_sent(),
        [r#"{"host":"db1","count":50}"#, "plain", "12"]
    );
}

#[test]
fn replacing_error_and_tool_error_does_not_change_the_tool_errors_made() {
    let program = r#"
        globalThis.Error = function () { return { fake: true }; };
        const Original = ToolError;
        globalThis.ToolError = function () {};
        try { await fail(); } catch (e) {
            return [e instanceof Original, e.name, e.kind, e.fake === undefined];
        }"#;
    let run = run(
        program,
        &[("fail", "")],
        Tools::new().failing("fail", FailureKind::Denied, "no"),
    );
    assert_eq!(run.value(), r#"[true,"ToolError","denied",true]"#);
}

#[test]
fn a_binding_declared_twice_is_a_bad_start() {
    let run = run("return 1;", &[("a", ""), ("a", "a(x)")], Tools::new());
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.contains("declared twice"), "{error}");
}

#[test]
fn a_malformed_signature_is_a_bad_start() {
    let run = run("return 1;", &[("a", "a x y")], Tools::new());
    let (kind, error) = run.failure();
    assert_eq!(kind, FailureKind::Invalid);
    assert!(error.contains("signature"), "{error}");
}

#[test]
fn unicode_and_lone_surrogates_in_args_are_kept_as_json_escapes() {
    let program = r#"
        await t({ s: 'é😀\ud800x' });
        await t('plain é😀 and a lone \udc00 surrogate');
        await sig('😀', '\udbff');"#;
    let run = run(
        program,
        &[("t", ""), ("sig", "sig(a, b)")],
        Tools::new().echo("t").echo("sig"),
    );
    assert_eq!(
        run.tools.args_sent(),
        [
            r#"{"s":"é😀\ud800x"}"#,
            // Text sent as it is must be UTF-8: a lone surrogate cannot be.
            "plain é😀 and a lone \u{fffd} surrogate",
            r#"{"a":"😀","b":"\udbff"}"#,
        ]
    );
}

#[test]
fn unicode_and_lone_surrogates_in_values_reach_the_program_intact() {
    let tools = Tools::new().tool("t", |_| {
        Ok(r#"{"s":"é😀\udc00","e":"\ud83d\ude00"}"#.to_owned())
    });
    let program = r#"
        const v = await t();
        return [v.s.length, v.s.charCodeAt(3), v.e === '😀', v.s];"#;
    let run = run(program, &[("t", "")], tools);
    assert_eq!(run.value(), r#"[4,56320,true,"é😀\udc00"]"#);
}

/// Args JSON has no text for (a BigInt, a cycle) fail the call with a
/// TypeError that names the tool, with or without a signature, and says
/// what to do; QuickJS's own words ("circular reference") named nothing.
#[test]
fn args_with_no_json_form_are_a_type_error_naming_the_tool() {
    for (program, said, hint) in [
        (
            "try { await search({ n: 1n }) } catch (e) { return [e.name, e.message] }",
            "search: the args have no JSON form: ",
            "String(n)",
        ),
        (
            "const a = {}; a.self = a;\ntry { await search(a) } catch (e) { return [e.name, e.message] }",
            "search: the args have no JSON form: ",
            "holds itself",
        ),
        (
            "const a = {}; a.self = a;\ntry { await lookup(a, 2) } catch (e) { return [e.name, e.message] }",
            "lookup: the args have no JSON form: ",
            "holds itself",
        ),
    ] {
        let run = crate::fake::run(
            program,
            &[("search", ""), ("lookup", "lookup(q, n)")],
            crate::fake::Tools::new().echo("search").echo("lookup"),
        );
        let value: serde_json::Value = serde_json::from_str(run.value()).unwrap();
        assert_eq!(value[0], "TypeError", "{program}: {value}");
        let message = value[1].as_str().unwrap();
        assert!(message.starts_with(said), "{program}: {value}");
        assert!(message.contains(hint), "{program}: {value}");
        assert!(run.tools.tools_sent().is_empty(), "{program}");
    }
}
