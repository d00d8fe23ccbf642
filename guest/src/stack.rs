//! An error's stack as a program reads it (`stack.js`): V8's shape, with
//! the author's places. Made once with the evaluator, before the snapshot;
//! the places come from the run in progress ([`Session::current`]).

use rquickjs::{Ctx, Function, Object, Value};

use crate::session::Session;

/// Replaces what `stack.js` replaces, and puts `rawStack` and
/// `stackFrames` in the web surface's `shared`.
pub(crate) fn install<'js>(ctx: &Ctx<'js>, web: &crate::web::Web) -> rquickjs::Result<()> {
    let native = Object::new(ctx.clone())?;
    native.set("mapPlace", Function::new(ctx.clone(), map_place)?)?;
    native.set("classId", Function::new(ctx.clone(), crate::web::class_id)?)?;
    let make: Function = script!("stack.js").run(ctx, "<wasmwire:stack>")?;
    make.call((native, web.shared(ctx)?))
}

/// `[line, column]`, the author's place for QuickJS's line and byte column
/// of the program, or undefined for a place that is not the program's.
fn map_place<'js>(
    ctx: Ctx<'js>,
    line: Value<'js>,
    column: Value<'js>,
) -> rquickjs::Result<Value<'js>> {
    let (Some(line), Some(column)) = (line.as_int(), column.as_int()) else {
        return Ok(Value::new_undefined(ctx));
    };
    let Some(at) = Session::current(&ctx)
        .and_then(|session| session.sent())
        .and_then(|sent| sent.original(line.into(), column.into()))
    else {
        return Ok(Value::new_undefined(ctx));
    };
    let place = rquickjs::Array::new(ctx)?;
    place.set(0, at.line)?;
    place.set(1, at.column)?;
    Ok(place.into_value())
}
