//! The tools a program may call: names, signatures and async handlers.
//!
//! [`Tools`] is what the parent's [`wire::Server`] answers with: it looks a
//! call's tool up by name (an unknown name is answered `not_found`) and runs
//! its handler. A handler returns the value's raw text, or fails with a
//! [`ToolFailure`] to choose the failure class; any other error becomes
//! `unknown`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use wire::{Call, FailureKind, Handler, HandlerError, HandlerFuture, StartBinding, ToolFailure};

use crate::SandboxError;

/// One registered tool.
#[derive(Clone)]
pub struct Tool {
    name: String,
    signature: String,
    handler: Arc<dyn Handler>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("signature", &self.signature)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool named `name` answered by `handler`: `async fn(Call) -> Result<String, HandlerError>`.
    pub fn new<F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, HandlerError>> + Send + 'static,
    {
        Tool {
            name: name.into(),
            signature: String::new(),
            handler: Arc::new(handler),
        }
    }

    /// Sets the signature, e.g. `"get_logs(host, count)"`: the program then
    /// calls `get_logs("db1", 50)` and the tool receives
    /// `{"host":"db1","count":50}`. Without one, the single argument is sent.
    pub fn signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = signature.into();
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn check(&self) -> Result<(), SandboxError> {
        let bad = |why: String| SandboxError::BadTool {
            name: self.name.clone(),
            why,
        };
        if self.name.is_empty() {
            return Err(bad("the name is empty".into()));
        }
        if self.name.chars().any(char::is_control) {
            return Err(bad("the name contains a control character".into()));
        }
        if self.signature.is_empty() {
            return Ok(());
        }
        let (fname, rest) = self.signature.split_once('(').ok_or_else(|| {
            bad(format!(
                "signature {:?} has no parameter list",
                self.signature
            ))
        })?;
        let params = rest.trim_end().strip_suffix(')').ok_or_else(|| {
            bad(format!(
                "signature {:?} does not end with ')'",
                self.signature
            ))
        })?;
        if fname.trim() != self.name {
            return Err(bad(format!(
                "signature {:?} names another function",
                self.signature
            )));
        }
        let mut seen = Vec::new();
        for param in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if !is_identifier(param) {
                return Err(bad(format!("parameter {param:?} is not an identifier")));
            }
            if seen.contains(&param) {
                return Err(bad(format!("parameter {param:?} appears twice")));
            }
            seen.push(param);
        }
        Ok(())
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c == '$' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c == '$' || c.is_alphanumeric())
}

/// The tools of an execution. Cheap to clone; answers calls by name.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    by_name: Arc<BTreeMap<String, Tool>>,
}

impl Tools {
    /// No tools.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tool`, refusing a bad name or signature, or a name taken twice.
    pub fn register(&mut self, tool: Tool) -> Result<&mut Self, SandboxError> {
        tool.check()?;
        let map = Arc::make_mut(&mut self.by_name);
        if map.contains_key(&tool.name) {
            return Err(SandboxError::BadTool {
                name: tool.name,
                why: "registered twice".into(),
            });
        }
        map.insert(tool.name.clone(), tool);
        Ok(self)
    }

    /// The Start's bindings: one per tool, in name order.
    pub fn bindings(&self) -> Vec<StartBinding> {
        self.by_name
            .values()
            .map(|t| StartBinding {
                name: t.name.clone(),
                signature: t.signature.clone(),
            })
            .collect()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

impl Handler for Tools {
    fn call(&self, call: Call) -> HandlerFuture {
        match self.by_name.get(&call.tool) {
            Some(tool) => tool.handler.call(call),
            None => {
                let why = format!("no tool named {:?}", call.tool);
                Box::pin(async move { Err(ToolFailure::new(FailureKind::NotFound, why).into()) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop() -> Tool {
        Tool::new("t", |_call| async { Ok::<_, HandlerError>(String::new()) })
    }

    #[test]
    fn good_signatures_are_accepted() {
        for sig in [
            "",
            "t()",
            "t(a)",
            "t(host, count)",
            "t( a ,b )",
            "t($x, _y2)",
        ] {
            assert!(noop().signature(sig).check().is_ok(), "{sig}");
        }
    }

    #[test]
    fn bad_names_and_signatures_are_refused_with_a_reason() {
        let cases = [
            (
                Tool::new("", |_c| async { Ok::<_, HandlerError>(String::new()) }),
                "empty",
            ),
            (noop().signature("t"), "no parameter list"),
            (noop().signature("t(a"), "does not end"),
            (noop().signature("u(a)"), "another function"),
            (noop().signature("t(1a)"), "not an identifier"),
            (noop().signature("t(a, a)"), "twice"),
        ];
        for (tool, why) in cases {
            let err = tool.check().unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
        }
    }

    #[test]
    fn a_name_registered_twice_is_refused() {
        let mut tools = Tools::new();
        tools.register(noop()).unwrap();
        assert!(tools.register(noop()).is_err());
        assert_eq!(tools.len(), 1);
    }

    #[tokio::test]
    async fn an_unknown_tool_is_not_found() {
        let tools = Tools::new();
        let call = Call::new("1", "nope", "", wire::Holdings::new(0));
        let err = tools.call(call).await.unwrap_err();
        let failure = err.downcast::<ToolFailure>().unwrap();
        assert_eq!(failure.kind, FailureKind::NotFound);
    }
}
