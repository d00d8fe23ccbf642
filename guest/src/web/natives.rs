//! The native half of the web surface: what the JavaScript files call.
//!
//! Every function takes and returns plain values (strings, numbers, byte
//! arrays); the files make the classes. Strings arrive well formed (the
//! files call `toWellFormed` first, as the standards' USVString does).

use rquickjs::function::Opt;
use rquickjs::{Array, Ctx, Exception, FromJs, Function, Object, TypedArray, Value, qjs};
use url::{Url, quirks};

use crate::intrinsics::Utf8;
use crate::session::Session;

/// Text a native takes from the program, copied out of QuickJS only once
/// what the guest holds for it, `COPIES` times its length (the copies the
/// native makes of it), fits the program's memory limit
/// (`Heap::admit_own`); past it the run stops where the program is, as
/// when its heap is full. `new URL()` of a 20 MB string was copied three
/// times past the memory cap, with Rust's allocation message on the
/// console (tests/HOSTILE.md item 107).
struct Text<const COPIES: usize>(String);

impl<'js, const COPIES: usize> FromJs<'js> for Text<COPIES> {
    fn from_js(ctx: &Ctx<'js>, value: Value<'js>) -> rquickjs::Result<Self> {
        let utf8 = Utf8::of(&rquickjs::String::from_js(ctx, value)?)?;
        match Session::current(ctx).and_then(|session| Some((session.intrinsics()?, session))) {
            Some((intrinsics, session)) => intrinsics.held(&utf8, session.heap(), COPIES).map(Text),
            // Outside a run (never, as the files call them): as it is.
            None => Ok(Text(String::from_utf8_lossy(utf8.bytes()).into_owned())),
        }
    }
}

/// The object of natives handed to each file.
pub(super) fn object<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let native = Object::new(ctx.clone())?;
    native.set("urlParse", Function::new(ctx.clone(), url_parse)?)?;
    native.set("urlSet", Function::new(ctx.clone(), url_set)?)?;
    native.set("formParse", Function::new(ctx.clone(), form_parse)?)?;
    native.set("formSerialize", Function::new(ctx.clone(), form_serialize)?)?;
    native.set("utf8Encode", Function::new(ctx.clone(), utf8_encode)?)?;
    native.set("utf8Decode", Function::new(ctx.clone(), utf8_decode)?)?;
    native.set("randomBytes", Function::new(ctx.clone(), random_bytes)?)?;
    native.set("digest", Function::new(ctx.clone(), digest)?)?;
    native.set("classId", Function::new(ctx.clone(), class_id)?)?;
    native.set("arrayKeys", Function::new(ctx.clone(), array_keys)?)?;
    native.set("sinceStart", Function::new(ctx.clone(), since_start)?)?;
    native.set("unnoted", Function::new(ctx.clone(), unnoted)?)?;
    native.set("sortIndexed", Function::new(ctx.clone(), sort_indexed)?)?;
    native.set(
        "collationTable",
        Function::new(ctx.clone(), super::collate::set_table)?,
    )?;
    // SAFETY: the context is live; `from_raw` takes the new reference, and
    // an exception value is never wrapped.
    let compare_primaries = unsafe {
        let raw = qjs::JS_NewCFunction2(
            ctx.as_raw().as_ptr(),
            Some(super::collate::compare_primaries),
            c"comparePrimaries".as_ptr(),
            3,
            qjs::JSCFunctionEnum_JS_CFUNC_generic,
            0,
        );
        if qjs::JS_IsException(raw) {
            return Err(rquickjs::Error::Exception);
        }
        Value::from_raw(ctx.clone(), raw)
    };
    native.set("comparePrimaries", compare_primaries)?;
    Ok(native)
}

/// `sortIndexed(o, len, comparefn, skipHoles, fresh)`: the standard's
/// SortIndexedProperties with `comparefn` called in V8's order
/// ([`crate::sort`]): the values of `o[0..len)` (an index `o` does not
/// have skipped when `skipHoles`, `sort`'s way, else read as `undefined`,
/// `toSorted`'s), `undefined` set aside to go last, the rest sorted; then
/// written into a new array (`fresh`, `toSorted`) or back into `o`, whose
/// indices past them are deleted (`sort`). Done here rather than in
/// `sort.js`: QuickJS's interpreter took twice as long over the indices.
///
/// The values are held outside QuickJS's heap while they are gathered and
/// sorted, with a merge's copy of up to half of them, so each growth is
/// admitted as the guest's own first: past the memory limit the run stops
/// where the program is, as when its heap is full.
fn sort_indexed<'js>(
    ctx: Ctx<'js>,
    o: Object<'js>,
    len: f64,
    comparefn: Function<'js>,
    skip_holes: bool,
    fresh: bool,
) -> rquickjs::Result<Value<'js>> {
    let session = Session::current(&ctx);
    let admit = |bytes: usize| {
        session
            .as_ref()
            .is_none_or(|session| session.heap().admit_own(bytes))
    };
    let size = std::mem::size_of::<Value<'js>>();
    // A length is an integer of at most 2^53 - 1 (`sort.js`'s ToLength).
    let len = len as u64;
    let index = |k: u64| match u32::try_from(k) {
        Ok(k) if k < u32::MAX => rquickjs::Atom::from_u32(ctx.clone(), k),
        _ => rquickjs::Atom::from_f64(ctx.clone(), k as f64),
    };
    let mut items: Vec<Value<'js>> = Vec::new();
    let mut undefineds = 0u64;
    for k in 0..len {
        let key = index(k)?;
        if skip_holes && !o.contains_key(key.clone())? {
            continue;
        }
        let value: Value<'js> = o.get(key)?;
        if value.is_undefined() {
            undefineds += 1;
            continue;
        }
        if items.len() == items.capacity() {
            let room = (items.capacity() * 2).max(16);
            if !admit(room.saturating_mul(size))
                || items.try_reserve_exact(room - items.len()).is_err()
            {
                return Err(crate::bindings::out_of_memory(&ctx));
            }
        }
        items.push(value);
    }
    if !admit((items.len() / 2).saturating_mul(size)) {
        return Err(crate::bindings::out_of_memory(&ctx));
    }
    let raw = ctx.as_raw().as_ptr();
    let compare = comparefn.as_raw();
    crate::sort::tim_sort(&mut items, |x, y| {
        // Called as QuickJS's own sort calls it, without the conversions
        // and the list of arguments a call through rquickjs makes (a third
        // of a sort's time).
        let mut args = [x.as_raw(), y.as_raw()];
        let mut order = 0.0f64;
        // SAFETY: `raw` is the live context `comparefn`, `x` and `y` belong
        // to, and all three outlive the call. `JS_Call` borrows the
        // function and the arguments and hands back a value of its own (or
        // the exception marker, with the exception left pending for the
        // caller), which `JS_ToFloat64` reads and `JS_FreeValue` frees.
        let converted = unsafe {
            let answer = qjs::JS_Call(raw, compare, qjs::JS_UNDEFINED, 2, args.as_mut_ptr());
            if qjs::JS_IsException(answer) {
                false
            } else {
                let read = qjs::JS_ToFloat64(raw, &mut order, answer) == 0;
                qjs::JS_FreeValue(raw, answer);
                read
            }
        };
        if !converted {
            return Err(rquickjs::Error::Exception);
        }
        // NaN reads as 0: not before.
        Ok(order < 0.0)
    })?;
    let sorted = items.len() as u64;
    let target = if fresh {
        Array::new(ctx.clone())?.into_object()
    } else {
        o
    };
    for (k, value) in (0u64..).zip(items) {
        target.set(index(k)?, value)?;
    }
    for k in sorted..sorted + undefineds {
        target.set(index(k)?, Value::new_undefined(ctx.clone()))?;
    }
    if !fresh {
        for k in sorted + undefineds..len {
            target.remove(index(k)?)?;
        }
    }
    Ok(target.into_value())
}

/// A URL's parts, in the order `url.js` reads them.
fn parts(url: &Url) -> Vec<String> {
    vec![
        quirks::href(url).to_owned(),
        origin(url),
        quirks::protocol(url).to_owned(),
        quirks::username(url).to_owned(),
        quirks::password(url).to_owned(),
        quirks::host(url).to_owned(),
        quirks::hostname(url).to_owned(),
        quirks::port(url).to_owned(),
        quirks::pathname(url).to_owned(),
        quirks::search(url).to_owned(),
        quirks::hash(url).to_owned(),
    ]
}

/// The URL Standard's origin. The crate gives a `blob:` URL the origin of
/// the URL in its path whatever that URL's scheme; the standard only for
/// `http`, `https` and `file` (whose origin is opaque), else it is opaque.
fn origin(url: &Url) -> String {
    if url.scheme() == "blob" {
        return match Url::parse(url.path()) {
            Ok(inner) if matches!(inner.scheme(), "http" | "https") => quirks::origin(&inner),
            _ => "null".to_owned(),
        };
    }
    quirks::origin(url)
}

/// `new URL(input, base)`: the parts, or `null` when either does not parse.
fn url_parse(input: Text<3>, base: Opt<Text<3>>) -> Option<Vec<String>> {
    let url = match base.0 {
        Some(base) => Url::parse(&base.0).ok()?.join(&input.0).ok()?,
        None => Url::parse(&input.0).ok()?,
    };
    Some(parts(&url))
}

/// One of the URL setters on `href`: the new parts, or `null` when the
/// setter fails (only `href` throws then; the others leave the URL be).
fn url_set(href: Text<3>, which: String, value: Text<3>) -> Option<Vec<String>> {
    let (href, value) = (href.0, value.0);
    let mut url = Url::parse(&href).ok()?;
    let done = match which.as_str() {
        "href" => quirks::set_href(&mut url, &value).map_err(drop),
        "protocol" => quirks::set_protocol(&mut url, &value),
        "username" => quirks::set_username(&mut url, &value),
        "password" => quirks::set_password(&mut url, &value),
        "host" => quirks::set_host(&mut url, &value),
        "hostname" => quirks::set_hostname(&mut url, &value),
        "port" => quirks::set_port(&mut url, &value),
        "pathname" => {
            quirks::set_pathname(&mut url, &value);
            Ok(())
        }
        "search" => {
            quirks::set_search(&mut url, &value);
            Ok(())
        }
        "hash" => {
            quirks::set_hash(&mut url, &value);
            Ok(())
        }
        _ => Err(()),
    };
    match done {
        Ok(()) => Some(parts(&url)),
        Err(()) if which == "href" => None,
        Err(()) => Url::parse(&href).ok().map(|url| parts(&url)),
    }
}

/// `application/x-www-form-urlencoded` text as `[name, value, name, ...]`.
fn form_parse(text: Text<3>) -> Vec<String> {
    form_urlencoded::parse(text.0.as_bytes())
        .flat_map(|(name, value)| [name.into_owned(), value.into_owned()])
        .collect()
}

/// `[name, value, ...]` as `application/x-www-form-urlencoded` text.
fn form_serialize(pairs: Vec<String>) -> String {
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    for pair in pairs.chunks(2) {
        if let [name, value] = pair {
            serializer.append_pair(name, value);
        }
    }
    serializer.finish()
}

/// A string's UTF-8 bytes.
fn utf8_encode<'js>(ctx: Ctx<'js>, text: Text<1>) -> rquickjs::Result<TypedArray<'js, u8>> {
    TypedArray::new(ctx, text.0.into_bytes())
}

/// Decodes UTF-8 as the Encoding Standard does: `[text, pending]`, where
/// `pending` is the incomplete sequence at the end held back for the next
/// chunk when `stream`, and every invalid sequence is U+FFFD (or, when
/// `fatal`, a TypeError). The bytes are copied out before anything else
/// runs.
fn utf8_decode<'js>(
    ctx: Ctx<'js>,
    bytes: TypedArray<'js, u8>,
    stream: bool,
    fatal: bool,
) -> rquickjs::Result<Vec<Value<'js>>> {
    let bytes: Vec<u8> = match bytes.as_raw() {
        // SAFETY: the pointer is valid until JavaScript runs again, and the
        // bytes are copied out here, before any call into the engine.
        Some(raw) => unsafe { raw.as_ref() }.to_vec(),
        None => Vec::new(),
    };
    let held = if stream { incomplete_tail(&bytes) } else { 0 };
    let (body, tail) = bytes.split_at(bytes.len() - held);
    let text = if fatal {
        match std::str::from_utf8(body) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => {
                return Err(Exception::throw_type(
                    &ctx,
                    "The encoded data was not valid UTF-8",
                ));
            }
        }
    } else {
        String::from_utf8_lossy(body)
    };
    let text = rquickjs::String::from_str(ctx.clone(), &text)?.into_value();
    let pending = TypedArray::<u8>::new(ctx, tail.to_vec())?.into_value();
    Ok(vec![text, pending])
}

/// How many bytes at the end of `bytes` are the start of a UTF-8 sequence
/// that more bytes could still complete (0 to 3).
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=3.min(bytes.len()) {
        let start = bytes.len() - back;
        if bytes[start] & 0xC0 != 0x80 {
            // A lead byte (or ASCII): complete it or it is not pending.
            return match std::str::from_utf8(&bytes[start..]) {
                Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => back,
                _ => 0,
            };
        }
    }
    0
}

/// `n` bytes from the system's random source (WASI `random` in the
/// component), drawn now.
fn random_bytes<'js>(ctx: Ctx<'js>, n: usize) -> rquickjs::Result<TypedArray<'js, u8>> {
    let mut bytes = vec![0u8; n];
    if getrandom::fill(&mut bytes).is_err() {
        return Err(Exception::throw_internal(
            &ctx,
            "the system's random source failed",
        ));
    }
    TypedArray::new(ctx, bytes)
}

/// The digest of `bytes` by the WebCrypto algorithm `name` (already
/// normalised to upper case by `crypto.js`), or `None` for an algorithm
/// that is not one of the four.
fn digest<'js>(
    ctx: Ctx<'js>,
    name: String,
    bytes: TypedArray<'js, u8>,
) -> rquickjs::Result<Option<rquickjs::ArrayBuffer<'js>>> {
    use sha2::Digest as _;
    let raw = bytes.as_raw();
    // SAFETY: the bytes stay valid while no JavaScript runs and nothing is
    // allocated in the engine; the hash is pure Rust, done before the
    // result is made. Not copied: a copy of a 32 MiB input ran the guest's
    // own allocator out where the input itself fitted.
    let data: &[u8] = match &raw {
        Some(raw) => unsafe { raw.as_ref() },
        None => &[],
    };
    let hash = match name.as_str() {
        "SHA-1" => sha1::Sha1::digest(data).to_vec(),
        "SHA-256" => sha2::Sha256::digest(data).to_vec(),
        "SHA-384" => sha2::Sha384::digest(data).to_vec(),
        "SHA-512" => sha2::Sha512::digest(data).to_vec(),
        _ => return Ok(None),
    };
    rquickjs::ArrayBuffer::new(ctx, hash).map(Some)
}

/// Milliseconds since the run in progress started (0 outside a run):
/// `performance.now()`.
fn since_start(ctx: Ctx<'_>) -> f64 {
    crate::session::Session::current(&ctx)
        .and_then(|session| session.elapsed_ms())
        .unwrap_or(0.0)
}

/// Calls `make`, which makes an error the program did not throw (an
/// abort's reason), so that its stack is not taken for where the job's
/// next throw was (`throw_site::unnoted`).
fn unnoted<'js>(ctx: Ctx<'js>, make: Function<'js>) -> rquickjs::Result<Value<'js>> {
    match crate::session::Session::current(&ctx) {
        Some(session) => crate::throw_site::unnoted(&ctx, &session, || make.call(())),
        None => make.call(()),
    }
}

/// QuickJS's class id of a value (0 for a primitive): what it really is,
/// which no program can spoof. `clone.js` learns which id is which class
/// by asking about one object of each, so no id is written down here.
pub(crate) fn class_id(value: Value<'_>) -> u32 {
    // SAFETY: JS_GetClassID only reads the tag and, for an object, its
    // class id; the value is alive for the call.
    unsafe { rquickjs::qjs::JS_GetClassID(value.as_raw()) }
}

/// QuickJS's mark of an atom that is an index below 2^31, kept as the
/// number itself (`JS_ATOM_TAG_INT` in quickjs.c, not in its header): such
/// keys have no string until one is asked for. An index at or above 2^31
/// is a string atom, and is copied as a named key (to the same effect).
const ATOM_TAG_INT: u32 = 1 << 31;

/// An array's own enumerable keys as `structuredClone` copies them:
/// `[indices, named]`, where `indices` is `null` when every index below its
/// length is there (a dense array: the caller counts up), else the indices
/// there are, in order; `named` is its other keys (`rows.total = 3`), in
/// order. `null` in all when one of its indices is not enumerable (the
/// caller then takes `Object.keys`). `Object.keys` of a million-element
/// array made a million strings (out of memory at 64 MiB); QuickJS's own
/// list of its keys names the indices by number ([`ATOM_TAG_INT`]), made
/// no string of, and a sparse array (`a[1e9] = 1`) is not counted up to
/// its length.
fn array_keys<'js>(ctx: Ctx<'js>, array: Object<'js>) -> rquickjs::Result<Value<'js>> {
    let length: f64 = array.get("length")?;
    let named = rquickjs::Array::new(ctx.clone())?;
    let mut indices: usize = 0;
    let listed_or_dense: Option<Vec<u32>>;
    let raw = ctx.as_raw().as_ptr();
    let mut table: *mut rquickjs::qjs::JSPropertyEnum = std::ptr::null_mut();
    let mut count: u32 = 0;
    let flags = (rquickjs::qjs::JS_GPN_STRING_MASK | rquickjs::qjs::JS_GPN_SET_ENUM) as i32;
    // SAFETY: the context and object are live; on success QuickJS hands
    // over `count` entries at `table`, freed below with their atoms. On
    // failure an exception is pending and nothing was handed over.
    unsafe {
        if rquickjs::qjs::JS_GetOwnPropertyNames(raw, &mut table, &mut count, array.as_raw(), flags)
            < 0
        {
            return Err(rquickjs::Error::Exception);
        }
        let entries = std::slice::from_raw_parts(table, count as usize);
        let mut result = Ok(true);
        for entry in entries {
            if entry.atom & ATOM_TAG_INT != 0 {
                if !entry.is_enumerable {
                    result = Ok(false);
                    break;
                }
                indices += 1;
                continue;
            }
            if !entry.is_enumerable {
                continue;
            }
            let key = Value::from_raw(ctx.clone(), rquickjs::qjs::JS_AtomToValue(raw, entry.atom));
            if key.is_exception() {
                result = Err(rquickjs::Error::Exception);
                break;
            }
            if let Err(e) = named.set(named.len(), key) {
                result = Err(e);
                break;
            }
        }
        // A sparse array's indices, listed only for one (a dense array's
        // are 0 to its length, counted up by the caller).
        let sparse = (indices as f64) < length;
        let listed: Vec<u32> = if sparse {
            entries
                .iter()
                .filter(|entry| entry.atom & ATOM_TAG_INT != 0)
                .map(|entry| entry.atom & !ATOM_TAG_INT)
                .collect()
        } else {
            Vec::new()
        };
        rquickjs::qjs::JS_FreePropertyEnum(raw, table, count);
        if !result? {
            return Ok(Value::new_null(ctx));
        }
        listed_or_dense = sparse.then_some(listed);
    }
    let keys = rquickjs::Array::new(ctx.clone())?;
    match listed_or_dense {
        Some(listed) => keys.set(0, listed)?,
        None => keys.set(0, Value::new_null(ctx.clone()))?,
    }
    keys.set(1, named)?;
    Ok(keys.into_value())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_the_standard_ones() {
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        context.with(|ctx| {
            let hex = |name: &str, text: &str| {
                let bytes = TypedArray::<u8>::new(ctx.clone(), text.as_bytes().to_vec()).unwrap();
                digest(ctx.clone(), name.into(), bytes)
                    .unwrap()
                    .map(|buffer| {
                        // SAFETY: no JavaScript runs while the bytes are read.
                        let bytes = unsafe { buffer.as_bytes() }.unwrap();
                        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
                    })
            };
            // FIPS 180 test vectors for "abc".
            assert_eq!(
                hex("SHA-1", "abc").unwrap(),
                "a9993e364706816aba3e25717850c26c9cd0d89d"
            );
            assert_eq!(
                hex("SHA-256", "abc").unwrap(),
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
            );
            assert!(
                hex("SHA-384", "abc")
                    .unwrap()
                    .starts_with("cb00753f45a35e8b")
            );
            assert!(
                hex("SHA-512", "abc")
                    .unwrap()
                    .starts_with("ddaf35a193617aba")
            );
            assert_eq!(hex("MD5", "abc"), None);
        });
    }

    #[test]
    fn an_incomplete_sequence_at_the_end_is_held_back() {
        assert_eq!(incomplete_tail(b"abc"), 0);
        assert_eq!(incomplete_tail(b"a\xE2\x82"), 2);
        assert_eq!(incomplete_tail(b"a\xF0"), 1);
        assert_eq!(incomplete_tail(b"a\xF0\x9F\x92"), 3);
        assert_eq!(incomplete_tail("a€".as_bytes()), 0);
        // Not a prefix of any sequence: decoded (as U+FFFD) now.
        assert_eq!(incomplete_tail(b"a\xE0\x80"), 0);
        assert_eq!(incomplete_tail(b"a\xFF"), 0);
        assert_eq!(incomplete_tail(b"\x80\x80\x80"), 0);
    }
}
